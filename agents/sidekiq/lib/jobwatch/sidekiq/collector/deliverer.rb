# Sends events to POST /api/ingest in batches; keeps them in the spool while jobwatch
# is unreachable or busy, and drains the spool oldest first with backoff.
#
# `deliver` returns once every event it was given is safe: accepted by jobwatch or on
# disk. The stream reader saves its checkpoint only after that, so stopping the
# collector at any moment loses nothing. Order is kept: while the spool holds anything,
# new events go behind it. Only a 4xx other than 429 drops a batch (sending it again
# would fail the same way); every drop is logged with its count.
require "json"
require_relative "backoff"
require_relative "http_client"

module Jobwatch
  module Sidekiq
    module Collector
      class Deliverer
        EVENTS_PER_REQUEST_MAX = 1000
        BODY_BYTES_MAX = 5 * 1024 * 1024
        ENVELOPE_BYTES = '{"events":[]}'.bytesize
        EVENT_ERRORS_LOGGED_MAX = 3

        attr_reader :sent, :rejected, :dropped_refused, :truncated

        def initialize(client:, spool:, logger:, connection_id: nil, backoff: Backoff.new,
                       batch_size: EVENTS_PER_REQUEST_MAX, body_bytes_max: BODY_BYTES_MAX,
                       clock: -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) })
          @client = client
          @spool = spool
          @logger = logger
          @connection_id = connection_id
          @backoff = backoff
          @batch_size = batch_size
          @body_bytes_max = body_bytes_max
          @clock = clock
          @lock = Mutex.new
          @retry_at = 0.0
          @outage_since = nil
          @sent = 0
          @rejected = 0
          @dropped_refused = 0
          @truncated = 0
        end

        # events: Hashes without connectionId (added when sent, once the key's connection is known).
        def deliver(events)
          return if events.empty?
          encoded = events.map { |event| JSON.generate(event) }
          @lock.synchronize do
            if !@spool.empty? || @clock.call < @retry_at
              @spool.append(encoded)
              return
            end
            batches(encoded).each_with_index do |batch, index|
              next if send_batch(batch)
              batches(encoded).drop(index).each { |rest| @spool.append(rest) }
              return
            end
          end
        end

        # Sends spooled batches while jobwatch takes them; returns the events still spooled.
        def drain(max_batches: 10)
          @lock.synchronize do
            max_batches.times do
              break if @spool.empty? || @clock.call < @retry_at
              sequence, batch = @spool.oldest
              break if sequence.nil?
              break unless send_batch(batch, spooled: true)
              @spool.remove(sequence)
            end
            @spool.events
          end
        end

        def pending
          @spool.events
        end

        private

        def batches(encoded)
          result = []
          current = []
          size = ENVELOPE_BYTES
          encoded.each do |event|
            bytes = event.bytesize + 1
            if !current.empty? && (current.size >= @batch_size || size + bytes > @body_bytes_max)
              result << current
              current = []
              size = ENVELOPE_BYTES
            end
            current << event
            size += bytes
          end
          result << current unless current.empty?
          result
        end

        # True when the batch needs no resending (accepted, or refused for good).
        def send_batch(batch, spooled: false)
          connection = connection_id
          return retry_later("jobwatch unreachable (could not learn the API key's connection)", nil, batch, spooled) unless connection
          prefix = %({"connectionId":#{JSON.generate(connection)},)
          body = %({"events":[#{batch.map { |event| event.sub("{", prefix) }.join(",")}]})
          begin
            response = @client.post("/api/ingest", body)
          rescue NetworkError => e
            return retry_later("jobwatch unreachable (#{e.message})", nil, batch, spooled)
          end
          if response.status == 429 || response.status >= 500
            return retry_later("jobwatch answered #{response.status} #{response.error_text}", response.retry_after_s, batch, spooled)
          end
          if response.status >= 400
            @dropped_refused += batch.size
            @logger.error("jobwatch refused a batch with #{response.status} (#{response.error_text}): dropped #{batch.size} events; " \
                          "#{@dropped_refused} dropped this way since start")
            return true
          end
          delivered(batch, response)
          true
        end

        def connection_id
          return @connection_id if @connection_id
          response = @client.get("/api/agent/connection")
          if response.status == 200 && response.body.is_a?(Hash) && response.body["connectionId"].is_a?(String)
            @connection_id = response.body["connectionId"]
            @logger.info("jobwatch: the API key belongs to connection #{@connection_id}")
          else
            @logger.error("jobwatch: could not learn the API key's connection: #{response.status} #{response.error_text}")
          end
          @connection_id
        rescue NetworkError
          nil
        end

        def retry_later(reason, retry_after_s, batch, spooled)
          delay = @backoff.next_delay(retry_after_s)
          @retry_at = @clock.call + delay
          @outage_since ||= @clock.call
          waiting = @spool.events + (spooled ? 0 : batch.size)
          @logger.warn(format("flush failed: %s; retrying in %.2fs, %d events waiting", reason, delay, waiting))
          false
        end

        def delivered(batch, response)
          if @outage_since
            @logger.info(format("jobwatch reachable again after %.1fs; sending the spooled events in order", @clock.call - @outage_since))
            @outage_since = nil
          end
          @backoff.reset
          @retry_at = 0.0
          body = response.body.is_a?(Hash) ? response.body : {}
          @sent += body["accepted"].to_i + body["skipped"].to_i
          rejected = body["rejected"].to_i
          truncated = body["truncated"].to_i
          if rejected.positive?
            @rejected += rejected
            Array(body["errors"]).first(EVENT_ERRORS_LOGGED_MAX).each do |error|
              index = error["index"]
              event = index.is_a?(Integer) && batch[index] ? batch[index][0, 300] : "?"
              @logger.error("jobwatch rejected event #{index}: #{error["code"]} #{error["message"]} #{error["details"]}; event: #{event}")
            end
            @logger.error("jobwatch rejected #{rejected} of #{batch.size} events in a batch (#{@rejected} since start)")
          end
          return unless truncated.positive?
          @truncated += truncated
          @logger.error("jobwatch's daily event limit: #{truncated} events of a batch dropped (#{@truncated} since start)")
        end
      end
    end
  end
end
