# What the integration writes to the stream for one change of one job: the kind of
# change, when it happened (this process's wall clock, the clock Sidekiq's own
# enqueued_at and failed_at come from), and the native fields the collector maps.
# The first records of a run (enqueued or scheduled, and started) carry the job's
# arguments, masked and bounded (JobArguments): jobwatch keeps them from the first, so the
# stream holds them at most twice a run, never in full past jobwatch's bound.
require_relative "times"
require_relative "compat"
require_relative "job_arguments"

module Jobwatch
  module Sidekiq
    module JobRecord
      # Native job fields kept as Sidekiq wrote them (times in its own unit).
      KEPT_FIELDS = %w[jid class wrapped queue retry retry_count created_at enqueued_at at bid tags
                       error_class error_message failed_at retried_at].freeze
      # A failure storm fills the stream with failures: these bounds keep an entry near
      # 12 KB at most (the app's own frames are at the top of a backtrace).
      BACKTRACE_CHARS_MAX = 8_000
      ERROR_CHARS_MAX = 4_000
      KINDS = %w[enqueued scheduled started succeeded retrying dead cancelled requeued].freeze
      # The records that carry the job's arguments.
      ARGS_KINDS = %w[enqueued scheduled started].freeze

      module_function

      # attempt: the run this change belongs to (1 for the first run). error: the exception,
      # or the text of one Sidekiq kept in the job ("Class: message", no backtrace).
      def build(kind, job, at_s: Times.now_s, attempt: nil, error: nil, started_at_s: nil, reason: nil, worker: nil)
        record = { "v" => 1, "k" => kind, "t" => at_s, "job" => job.slice(*KEPT_FIELDS) }
        record["max"] = Compat.max_retries(job["retry"])
        record["attempt"] = attempt || attempt_of(job)
        record["wid"] = worker if worker
        record["started"] = started_at_s if started_at_s
        record["reason"] = reason if reason
        if ARGS_KINDS.include?(kind)
          args = Jobwatch::Sidekiq.arguments.of(job)
          record["args"] = args unless args.nil?
        end
        if error.is_a?(String)
          record["error"] = error[0, ERROR_CHARS_MAX]
        elsif error
          record["error"] = error_text(error)[0, ERROR_CHARS_MAX]
          record["backtrace"] = Array(error.backtrace).join("\n")[0, BACKTRACE_CHARS_MAX] if error.backtrace
        end
        record
      end

      # Sidekiq leaves retry_count out on the first run and sets it to 0 when that run
      # fails, so the run now starting is retry_count + 2.
      def attempt_of(job)
        count = job["retry_count"]
        count.is_a?(Integer) ? count + 2 : 1
      end

      def error_text(error)
        message = error.message.to_s
        message = message.dup.force_encoding(Encoding::UTF_8).scrub unless message.valid_encoding?
        "#{error.class.name}: #{message}"
      end
    end
  end
end
