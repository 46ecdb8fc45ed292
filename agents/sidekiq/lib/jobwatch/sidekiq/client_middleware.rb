# Sidekiq client middleware: a job pushed for now is `enqueued`, one pushed with a
# future `at` is `scheduled`. It runs wherever jobs are pushed, including the Sidekiq
# process's own scheduler when it moves scheduled and retrying jobs to their queue.
require_relative "job_record"

module Jobwatch
  module Sidekiq
    class ClientMiddleware
      # Without a recorder of its own it uses the one `install!` set up last.
      def initialize(recorder = nil)
        @own_recorder = recorder
      end

      def call(_worker_class, job, _queue, _redis_pool = nil)
        pushed = yield
        note(pushed.is_a?(Hash) ? pushed : job) if pushed
        pushed
      end

      private

      def recorder
        @own_recorder || Jobwatch::Sidekiq.recorder
      end

      def note(job)
        kind = job["at"] ? "scheduled" : "enqueued"
        record = JobRecord.build(kind, job)
        recorder.record(record)
      rescue StandardError
        nil # the push goes on whatever happens here
      end
    end
  end
end
