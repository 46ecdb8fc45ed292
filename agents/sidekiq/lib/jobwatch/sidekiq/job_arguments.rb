# What a Sidekiq job was called with, as jobwatch takes it: the job's `args` array (an
# ActiveJob job's own `arguments`, out of the wrapper Sidekiq runs), masked (the values of
# secret-looking keys, at any depth) and bounded (Collector::Limits::PAYLOAD_BOUNDS). The
# arguments of the jobs `omit_args` names are never recorded nor sent. Sidekiq keeps no
# return value, so there is no result to show.
#
# The integration records the arguments with the first records of a run (enqueued or
# scheduled, and started), masked already, so the stream in Redis holds no secret either;
# the collector masks them again with its own settings (an integration of an older version,
# or other settings), and the arguments of the jobs it reads from Sidekiq's sets.
require_relative "collector/bound_json"
require_relative "collector/redaction"

module Jobwatch
  module Sidekiq
    class JobArguments
      Redaction = Collector::Redaction

      # Comma-separated key patterns (letters, digits, _ and -), or `none`; nil for the default list.
      def self.key_patterns(text, setting = "JOBWATCH_REDACT_KEYS")
        return Redaction::DEFAULT_REDACT_KEYS if text.nil? || text.strip.empty?
        return [] if text.strip.casecmp?("none")
        patterns = text.split(",").map(&:strip).reject(&:empty?)
        bad = patterns.find { |pattern| !pattern.match?(/\A[A-Za-z0-9_-]{1,64}\z/) }
        raise ArgumentError, "#{setting}: #{bad.inspect} is not a key pattern (letters, digits, _ and -, at most 64), or none" if bad
        raise ArgumentError, "#{setting}: name 1 to 100 key patterns, or none (got #{patterns.size})" unless (1..100).cover?(patterns.size)
        patterns
      end

      # Comma-separated job names; `*` matches any characters.
      def self.job_names(text, setting = "JOBWATCH_OMIT_ARGS")
        names = text.to_s.split(",").map(&:strip).reject(&:empty?)
        raise ArgumentError, "#{setting}: at most 1000 job names (got #{names.size})" if names.size > 1000
        long = names.find { |name| name.length > 1024 }
        raise ArgumentError, "#{setting}: #{long[0, 40].inspect}... is longer than jobwatch's 1024-character job names" if long
        names
      end

      # From JOBWATCH_REDACT_KEYS and JOBWATCH_OMIT_ARGS, the variables the collector reads too.
      def self.from_env(env = ENV)
        new(redact_keys: key_patterns(env["JOBWATCH_REDACT_KEYS"]), omit_args: job_names(env["JOBWATCH_OMIT_ARGS"]))
      end

      attr_reader :redactor, :omitted

      def initialize(redact_keys: Redaction::DEFAULT_REDACT_KEYS, omit_args: [])
        @redactor = Redaction::Redactor.new(redact_keys)
        @omitted = Redaction::OmittedNames.new(omit_args)
      end

      # A job hash's arguments, masked and bounded; nil when it has none or they are not sent.
      def of(job)
        return nil unless job.is_a?(Hash) && job.key?("args")
        name = job_name(job)
        args = job["args"]
        # ActiveJob: Sidekiq runs a wrapper whose one argument holds the job's own
        if job["wrapped"] && args.is_a?(Array) && args.size == 1 && args[0].is_a?(Hash) && args[0]["arguments"].is_a?(Array)
          args = args[0]["arguments"]
        end
        recorded(args, name)
      end

      # Arguments as recorded (or sent) already, masked and bounded by these settings; nil for a job whose arguments are not sent.
      def recorded(args, name)
        return nil if @omitted.include?(name)
        Collector::BoundJson.bound_payload(args, {}, @redactor)
      end

      # The name jobwatch shows: an ActiveJob job's own class, else the worker class.
      def job_name(job)
        wrapped = job["wrapped"]
        (wrapped.is_a?(String) && !wrapped.empty? ? wrapped : job["class"]).to_s
      end
    end

    class << self
      attr_writer :arguments

      # How the integration (and the collector) capture arguments: set by `install!` and by the collector's flags.
      def arguments
        @arguments ||= JobArguments.from_env
      end
    end
  end
end
