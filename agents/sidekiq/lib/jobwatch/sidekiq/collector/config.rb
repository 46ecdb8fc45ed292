# The collector's settings from flags and the environment. A bad value stops start-up
# with a message naming the setting, before anything connects anywhere.
require "optparse"
require "uri"
require_relative "../job_arguments"

module Jobwatch
  module Sidekiq
    module Collector
      class ConfigError < StandardError; end

      Config = Struct.new(:redis_url, :url, :api_key, :connection_id, :spool_dir, :spool_max_bytes, :stream,
                          :poll_interval_s, :command_interval_s, :process_stale_s, :set_scan_max, :redact_keys, :omit_args, :log_level,
                          keyword_init: true)

      # [flag, environment variable, default, help]
      SETTINGS = [
        ["--redis", "REDIS_URL", "redis://localhost:6379/0", "Sidekiq's Redis URL"],
        ["--url", "JOBWATCH_URL", nil, "jobwatch base URL, e.g. http://localhost:3000 (required)"],
        ["--api-key", "JOBWATCH_API_KEY", nil, "the connection's API key, sk_... (required)"],
        ["--connection-id", "JOBWATCH_CONNECTION_ID", nil, "the connection's id; by default asked from jobwatch with the API key"],
        ["--spool-dir", "JOBWATCH_SPOOL_DIR", "./jobwatch-spool",
         "directory for the stream checkpoint and the events kept while jobwatch is unreachable"],
        ["--spool-max-mb", "JOBWATCH_SPOOL_MAX_MB", "256", "spool bound in MB; past it the oldest events are dropped and logged"],
        ["--stream", "JOBWATCH_STREAM", "jobwatch:sidekiq:events", "the Redis stream the integration writes (same name on both sides)"],
        ["--poll-interval", "JOBWATCH_POLL_INTERVAL", "2", "seconds between polls of processes, queues and sets, 0.5..5"],
        ["--command-interval", "JOBWATCH_COMMAND_INTERVAL", "1", "seconds between polls for revoke/retry commands, 0.2..3600"],
        ["--process-stale", "JOBWATCH_PROCESS_STALE", "20",
         "the most seconds without a new Sidekiq heartbeat before a process is reported offline, 6..300 " \
         "(sooner when its beats were seen: twice the gap between them; Sidekiq beats every 5 s in 6.x, 10 s in 7.x)"],
        ["--set-scan-max", "JOBWATCH_SET_SCAN_MAX", "1000", "newest entries of each of the scheduled, retry and dead sets read per poll, 10..100000"],
        ["--redact-keys", "JOBWATCH_REDACT_KEYS", Redaction::DEFAULT_REDACT_KEYS.join(","),
         "comma-separated key patterns whose values are masked in a job's arguments before they leave (none for none); replaces the default list"],
        ["--omit-args", "JOBWATCH_OMIT_ARGS", nil,
         "job names whose arguments are never sent (several after the flag, the flag repeated, or comma-separated); * matches any characters (Billing::*)"],
        ["--log-level", "JOBWATCH_LOG_LEVEL", "info", "debug, info, warn or error"],
      ].freeze
      # Flags that take one or more values, and may be repeated: their values add up.
      LIST_FLAGS = %w[--omit-args].freeze

      module_function

      def load(argv, env = ENV)
        given = {}
        parser = OptionParser.new do |opts|
          opts.banner = "Usage: jobwatch-sidekiq [options]\n" \
                        "Reads the job events the integration records in Redis, polls Sidekiq's processes, queues and sets,\n" \
                        "sends them to jobwatch, and carries out revoke and retry commands. Every flag can also be set by\n" \
                        "the environment variable named in its help."
          SETTINGS.each do |flag, variable, default, help|
            shown = default ? " (default #{default})" : ""
            opts.on("#{flag} VALUE", "#{help}#{shown}; env #{variable}") do |value|
              given[flag] = LIST_FLAGS.include?(flag) && given[flag] ? "#{given[flag]},#{value}" : value
            end
          end
          opts.on("-h", "--help", "show this help") do
            puts opts
            exit 0
          end
        end
        begin
          parser.parse!(values_after_list_flags(argv))
        rescue OptionParser::ParseError => e
          raise ConfigError, e.message
        end
        raw = SETTINGS.to_h { |flag, variable, default, _| [flag, given[flag] || non_empty(env[variable]) || default] }
        build(raw)
      end

      def build(raw)
        redis_url = raw["--redis"]
        raise ConfigError, "--redis: #{redis_url.inspect} is not a URL such as redis://host:6379/0" unless redis_url.to_s.match?(%r{\Arediss?://})
        url = required(raw, "--url", "JOBWATCH_URL").chomp("/")
        uri = URI.parse(url) rescue nil
        unless uri.is_a?(URI::HTTP) && uri.host && !uri.host.empty?
          raise ConfigError, "--url: #{url.inspect} is not an http(s) URL such as http://localhost:3000"
        end
        api_key = required(raw, "--api-key", "JOBWATCH_API_KEY")
        raise ConfigError, "--api-key: a jobwatch API key starts with sk_" unless api_key.start_with?("sk_")
        level = raw["--log-level"].to_s.downcase
        raise ConfigError, "--log-level: #{raw["--log-level"].inspect} is not one of debug, info, warn, error" unless %w[debug info warn error].include?(level)
        stream = raw["--stream"].to_s
        raise ConfigError, "--stream: the stream name is empty" if stream.empty?
        Config.new(
          redis_url: redis_url,
          url: url,
          api_key: api_key,
          connection_id: raw["--connection-id"],
          spool_dir: raw["--spool-dir"],
          spool_max_bytes: number(raw, "--spool-max-mb", 1, 1_000_000, integer: true) * 1024 * 1024,
          stream: stream,
          poll_interval_s: number(raw, "--poll-interval", 0.5, 5),
          command_interval_s: number(raw, "--command-interval", 0.2, 3600),
          process_stale_s: number(raw, "--process-stale", 6, 300),
          set_scan_max: number(raw, "--set-scan-max", 10, 100_000, integer: true),
          redact_keys: setting("--redact-keys") { JobArguments.key_patterns(raw["--redact-keys"], "--redact-keys") },
          omit_args: setting("--omit-args") { JobArguments.job_names(raw["--omit-args"], "--omit-args") },
          log_level: level,
        )
      end

      # `--omit-args a b c` as `--omit-args a,b,c`: the values up to the next flag.
      def values_after_list_flags(argv)
        out = []
        argv.each do |arg|
          if !arg.start_with?("-") && LIST_FLAGS.include?(out[-2]) && !out[-1].start_with?("-")
            out[-1] = "#{out[-1]},#{arg}"
          else
            out << arg
          end
        end
        out
      end

      def setting(_flag)
        yield
      rescue ArgumentError => e
        raise ConfigError, e.message
      end

      def required(raw, flag, variable)
        value = raw[flag]
        raise ConfigError, "#{flag} (or #{variable}) is required" if value.nil? || value.empty?
        value
      end

      def number(raw, flag, low, high, integer: false)
        text = raw[flag].to_s
        value = integer ? Integer(text, 10, exception: false) : Float(text, exception: false)
        raise ConfigError, "#{flag}: #{text.inspect} is not #{integer ? "a whole number" : "a number"}" if value.nil?
        raise ConfigError, "#{flag}: #{text} is outside #{low}..#{high}" unless value >= low && value <= high
        value
      end

      def non_empty(value)
        value.nil? || value.empty? ? nil : value
      end
    end
  end
end
