# Sidekiq calls its death handlers when a job has no retries left (or never had any):
# recorded `dead`, which jobwatch shows as `failed` with the error and backtrace.
require_relative "job_record"
require_relative "server_middleware"

module Jobwatch
  module Sidekiq
    class DeathHandler
      # Without a recorder of its own it uses the one `install!` set up last.
      def initialize(recorder = nil)
        @own_recorder = recorder
      end

      def call(job, error)
        recorder.record(JobRecord.build("dead", job, attempt: attempt(job), error: error, worker: Compat.identity))
      rescue StandardError
        nil
      end

      private

      def recorder
        @own_recorder || Jobwatch::Sidekiq.recorder
      end

      # The server middleware noted the attempt this thread ran; Sidekiq has already
      # bumped retry_count by the time it calls us, so that is one run behind.
      def attempt(job)
        jid, attempt = Thread.current[ServerMiddleware::CURRENT_ATTEMPT]
        return attempt if jid == job["jid"] && attempt
        job["retry_count"].is_a?(Integer) ? job["retry_count"] + 1 : 1
      end
    end
  end
end
