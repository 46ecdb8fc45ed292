# Appends one job state change to a bounded Redis stream, from inside the Sidekiq
# process. The job comes first: a failure here is logged and counted, never raised,
# and after one the recorder stays quiet for a short while (a circuit breaker), so a
# Redis that misbehaves costs a job at most one failed command per pause, not one per
# state change. The stream is trimmed approximately (MAXLEN ~), which keeps the cost of
# trimming constant; the collector reads it from its checkpoint.
require "json"
require_relative "times"

module Jobwatch
  module Sidekiq
    class Recorder
      DEFAULT_STREAM = "jobwatch:sidekiq:events"
      DEFAULT_MAX_LENGTH = 100_000
      PAUSE_AFTER_FAILURE_S = 5.0
      # The stream entry's only field; its value is the record as JSON.
      FIELD = "e"

      attr_reader :stream, :max_length, :dropped

      # `redis` is called with a block that receives a connection (Sidekiq.redis by default).
      def initialize(stream: DEFAULT_STREAM, max_length: DEFAULT_MAX_LENGTH, redis: nil, logger: nil, clock: -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) })
        @stream = stream
        @max_length = max_length
        @redis = redis || ->(&block) { ::Sidekiq.redis(&block) }
        @logger = logger
        @clock = clock
        @paused_until = nil
        @dropped = 0
        @lock = Mutex.new
      end

      # Records one change; returns the stream id, or nil when it was dropped.
      def record(record)
        if paused?
          count_drop
          return nil
        end
        payload = encode(record)
        return nil if payload.nil?
        id = @redis.call { |conn| conn.call("XADD", @stream, "MAXLEN", "~", @max_length.to_s, "*", FIELD, payload) }
        @lock.synchronize { @paused_until = nil }
        id
      rescue StandardError => e
        failed(e)
        nil
      end

      private

      # A record that cannot be JSON (bytes that are not UTF-8 in a job's fields) is
      # dropped on its own; Redis is fine, so recording does not pause.
      def encode(record)
        JSON.generate(record)
      rescue JSON::GeneratorError, EncodingError => e
        count_drop
        @logger&.error("jobwatch: a job event could not be encoded as JSON (#{e.message[0, 200]}); dropped (#{@dropped} dropped so far)")
        nil
      end

      def paused?
        until_s = @paused_until
        !until_s.nil? && @clock.call < until_s
      end

      def count_drop
        @lock.synchronize { @dropped += 1 }
      end

      def failed(error)
        first = false
        @lock.synchronize do
          @dropped += 1
          first = @paused_until.nil?
          @paused_until = @clock.call + PAUSE_AFTER_FAILURE_S
        end
        return unless first && @logger
        @logger.error("jobwatch: could not record a job event in Redis stream #{@stream} (#{error.class}: #{error.message}); " \
                      "jobs run on, events are dropped for #{PAUSE_AFTER_FAILURE_S}s at a time until Redis answers (#{@dropped} dropped so far)")
      rescue StandardError
        nil
      end
    end
  end
end
