# The few places where Sidekiq 6 and 7 differ for us: the process identity the
# heartbeat uses, the configured default retry limit, and the shape of a running
# job in the work set. Kept together so the rest reads as one Sidekiq.
require "json"
require "socket"

module Jobwatch
  module Sidekiq
    module Compat
      DEFAULT_MAX_RETRIES = 25

      module_function

      # The identity Sidekiq's own heartbeat uses for this process ("host:pid:nonce"), so
      # a job's workerId matches the worker the collector reports.
      def identity
        load_identity_module
        @identity ||=
          if defined?(::Sidekiq::Util)
            Object.new.extend(::Sidekiq::Util).identity
          elsif defined?(::Sidekiq::Component)
            Object.new.extend(::Sidekiq::Component).identity
          else
            "#{Socket.gethostname}:#{::Process.pid}"
          end
      rescue StandardError
        @identity = "#{Socket.gethostname}:#{::Process.pid}"
      end

      # Sidekiq 6 keeps `identity` in Sidekiq::Util, 7 in Sidekiq::Component; only a
      # server process has loaded them by itself.
      def load_identity_module
        %w[sidekiq/util sidekiq/component].each do |path|
          require path
          break
        rescue LoadError
          next
        end
      end

      # Sidekiq's global max_retries (used when a job says `retry: true`).
      def default_max_retries
        value =
          if ::Sidekiq.respond_to?(:default_configuration)
            ::Sidekiq.default_configuration[:max_retries]
          elsif ::Sidekiq.respond_to?(:options)
            ::Sidekiq.options[:max_retries]
          end
        value.is_a?(Integer) ? value : DEFAULT_MAX_RETRIES
      rescue StandardError
        DEFAULT_MAX_RETRIES
      end

      # The retry limit a job's `retry` option means: true -> the configured default, false -> 0.
      def max_retries(retry_option)
        case retry_option
        when true, nil then default_max_retries
        when false then 0
        when Integer then [retry_option, 0].max
        else
          Integer(retry_option.to_s, exception: false) || default_max_retries
        end
      end

      # Every running job as [process identity, job hash]. Sidekiq 6 yields hashes whose
      # payload it already parsed; 7.0/7.1 leave the payload a JSON string; 7.2+ yield Work objects.
      def running_jobs
        running = []
        ::Sidekiq::Workers.new.each do |process_id, _thread_id, work|
          payload =
            if work.respond_to?(:job) then work.job.respond_to?(:item) ? work.job.item : work.job
            elsif work.respond_to?(:payload) then work.payload
            else work["payload"]
            end
          payload = JSON.parse(payload) if payload.is_a?(String)
          running << [process_id, payload] if payload.is_a?(Hash)
        end
        running
      end
    end
  end
end
