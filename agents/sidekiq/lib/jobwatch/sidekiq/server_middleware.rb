# Sidekiq server middleware: records `started`, then `succeeded`, or on an exception
# `retrying` when Sidekiq will retry the job (a job with no retries left is recorded
# `dead` by the death handler, with the same error). Before a job starts it takes down
# a revoke flag left by the collector and, if there was one, skips the job: Sidekiq
# then acknowledges it as done and it never runs; otherwise it marks the job running
# until it ends (see RevokeFlags). Nothing here raises into the job.
require_relative "job_record"
require_relative "revoke_flags"
require_relative "compat"

module Jobwatch
  module Sidekiq
    class ServerMiddleware
      # Per thread: the attempt of the job this thread runs, read by the death handler.
      CURRENT_ATTEMPT = :jobwatch_sidekiq_attempt

      # Without a recorder of its own it uses the one `install!` set up last.
      def initialize(recorder = nil)
        @own_recorder = recorder
      end

      def call(_worker, job, _queue)
        if revoked?(job)
          recorder.record(JobRecord.build("cancelled", job, worker: Compat.identity, reason: "revoked from jobwatch before it started"))
          return
        end
        begin
          run(job) { yield }
        ensure
          safely { ::Sidekiq.redis { |conn| RevokeFlags.finish(conn, job["jid"]) } if job["jid"].is_a?(String) }
        end
      end

      private

      def recorder
        @own_recorder || Jobwatch::Sidekiq.recorder
      end

      def run(job)
        attempt = JobRecord.attempt_of(job)
        Thread.current[CURRENT_ATTEMPT] = [job["jid"], attempt]
        started_s = Times.now_s
        safely { recorder.record(JobRecord.build("started", job, at_s: started_s, attempt: attempt, worker: Compat.identity)) }
        begin
          result = yield
        rescue Exception => e # rubocop:disable Lint/RescueException -- re-raised at once, Sidekiq decides
          safely { note_failure(job, e, attempt, started_s) }
          raise
        end
        safely { recorder.record(JobRecord.build("succeeded", job, attempt: attempt, started_at_s: started_s, worker: Compat.identity)) }
        result
      end

      # Takes down a revoke flag, or else marks the job running, in one transaction.
      def revoked?(job)
        jid = job["jid"]
        return false unless jid.is_a?(String)
        ::Sidekiq.redis { |conn| RevokeFlags.start(conn, jid, Compat.identity) }
      rescue StandardError
        false # jobwatch's flag cannot be read: the job runs as it would without jobwatch
      end

      def note_failure(job, error, attempt, started_s)
        if shutdown?(error)
          # Sidekiq pushes the unfinished job back to its queue on shutdown.
          recorder.record(JobRecord.build("requeued", job, attempt: attempt, started_at_s: started_s, worker: Compat.identity))
        elsif will_retry?(job)
          recorder.record(JobRecord.build("retrying", job, attempt: attempt, error: error, started_at_s: started_s, worker: Compat.identity))
        end
      end

      def shutdown?(error)
        defined?(::Sidekiq::Shutdown) && error.is_a?(::Sidekiq::Shutdown)
      end

      # What Sidekiq's JobRetry will do: retry while the retry count it is about to
      # write stays below the job's limit.
      def will_retry?(job)
        return false if job["retry"] == false || job["retry"] == 0
        next_count = job["retry_count"].is_a?(Integer) ? job["retry_count"] + 1 : 0
        next_count < Compat.max_retries(job["retry"])
      end

      def safely
        yield
      rescue StandardError
        nil
      end
    end
  end
end
