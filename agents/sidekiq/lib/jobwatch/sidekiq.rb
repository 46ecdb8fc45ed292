# jobwatch's Sidekiq integration: the one file an app requires. `install!` adds the
# client middleware (enqueued, scheduled), the server middleware (started, succeeded,
# retrying, revoked before start) and a death handler (retries exhausted) to Sidekiq's
# configuration; each records job changes into a bounded Redis stream that the
# collector (bin/jobwatch-sidekiq) reads and sends to jobwatch.
#
#   require "jobwatch/sidekiq"
#   Jobwatch::Sidekiq.install!
require "sidekiq"
require_relative "sidekiq/version"
require_relative "sidekiq/times"
require_relative "sidekiq/compat"
require_relative "sidekiq/recorder"
require_relative "sidekiq/job_arguments"
require_relative "sidekiq/job_record"
require_relative "sidekiq/revoke_flags"
require_relative "sidekiq/client_middleware"
require_relative "sidekiq/server_middleware"
require_relative "sidekiq/death_handler"

module Jobwatch
  module Sidekiq
    class << self
      attr_writer :recorder

      def recorder
        @recorder ||= Recorder.new(logger: safe_logger)
      end

      # Call at boot, where Sidekiq is configured; calling it again only changes the stream and
      # the settings. The stream name and its length bound default to JOBWATCH_STREAM and
      # JOBWATCH_STREAM_MAX_LENGTH (or built-ins); the collector must read the same stream.
      # `redact_keys` (key patterns whose values are masked in the arguments recorded) and
      # `omit_args` (job names whose arguments are never recorded, `*` for any characters)
      # default to JOBWATCH_REDACT_KEYS and JOBWATCH_OMIT_ARGS, the collector's variables too.
      def install!(stream: ENV.fetch("JOBWATCH_STREAM", Recorder::DEFAULT_STREAM),
                   max_length: Integer(ENV.fetch("JOBWATCH_STREAM_MAX_LENGTH", Recorder::DEFAULT_MAX_LENGTH.to_s)),
                   redact_keys: JobArguments.key_patterns(ENV["JOBWATCH_REDACT_KEYS"]),
                   omit_args: JobArguments.job_names(ENV["JOBWATCH_OMIT_ARGS"]))
        raise ArgumentError, "jobwatch: the stream's max_length must be at least 1000, got #{max_length}" if max_length < 1000
        self.arguments = JobArguments.new(redact_keys: redact_keys, omit_args: omit_args)
        @recorder = Recorder.new(stream: stream, max_length: max_length, logger: safe_logger)
        ::Sidekiq.configure_client do |config|
          add_client_middleware(config)
        end
        ::Sidekiq.configure_server do |config|
          # The server pushes jobs too: its scheduler moves due scheduled and retry jobs to their queues.
          add_client_middleware(config)
          config.server_middleware do |chain|
            chain.add(ServerMiddleware) unless chain.exists?(ServerMiddleware)
          end
          config.death_handlers << DeathHandler.new unless config.death_handlers.any? { |h| h.is_a?(DeathHandler) }
        end
        @recorder
      end

      private

      def add_client_middleware(config)
        config.client_middleware do |chain|
          chain.add(ClientMiddleware) unless chain.exists?(ClientMiddleware)
        end
      end

      def safe_logger
        ::Sidekiq.logger
      rescue StandardError
        nil
      end
    end
  end
end
