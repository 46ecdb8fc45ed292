# Sends events to POST /api/ingest in batches; keeps them in the spool while jobwatch
# is unreachable or busy, and drains the spool oldest first with backoff.
#
# `deliver` returns once every event it was given is safe: accepted by jobwatch or on
# disk. The stream reader saves its checkpoint only after that, so stopping the
# collector at any moment loses nothing. Order is kept: while the spool holds anything,
# new events go behind it.
#
# A batch jobwatch refuses as a whole (400 or 413: something in the body it will not take)
# is sent again in halves, and the halves' halves, until the events it refuses are alone:
# only those are dropped, each named in the log, and the rest of the batch is delivered,
# so one job's odd value never costs other jobs' events. Any other 4xx but 429 drops the
# batch (sending it again would fail the same way); events jobwatch rejects one by one in
# a 200 answer are logged and counted, never sent again. Every drop is logged with its count.
require "json"
require_relative "backoff"
require_relative "http_client"
require_relative "limits"

module Jobwatch
  module Sidekiq
    module Collector
      class Deliverer
        EVENTS_PER_REQUEST_MAX = Limits::INGEST_EVENTS_MAX
        BODY_BYTES_MAX = Limits::INGEST_BODY_BYTES_MAX
        ENVELOPE_BYTES = '{"events":[]}'.bytesize
        EVENT_ERRORS_LOGGED_MAX = 3
        # Events of one batch named one by one when refused; past it a count says how many more.
        REFUSED_NAMED_MAX = 20
        # Statuses saying that something in the body is refused, not the request: split the batch.
        REFUSED_BODY = [400, 413].freeze
        # A batch's events refused on their own while it was split, for the log.
        Refusals = Struct.new(:named, :dropped)

        attr_reader :sent, :rejected, :dropped_refused, :truncated

        # seen: called with the events of each `deliver` (the commands learn from it which jobs the collector reported)
        def initialize(client:, spool:, logger:, connection_id: nil, backoff: Backoff.new,
                       batch_size: EVENTS_PER_REQUEST_MAX, body_bytes_max: BODY_BYTES_MAX,
                       clock: -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) }, seen: nil)
          @client = client
          @spool = spool
          @logger = logger
          @connection_id = connection_id
          @backoff = backoff
          @batch_size = batch_size
          @body_bytes_max = body_bytes_max
          @clock = clock
          @seen = seen
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
          @seen&.call(events)
          encoded = events.filter_map { |event| encode(event) }
          return if encoded.empty?
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

        # The event's JSON, or nil (logged) for one JSON cannot write: it must not stop the batch.
        def encode(event)
          JSON.generate(event)
        rescue JSON::GeneratorError, EncodingError => e
          @dropped_refused += 1
          @logger.error("dropped #{Deliverer.identity(event)}: it cannot be written as JSON (#{e.class}: #{e.message[0, 200]})")
          nil
        end

        # True when the batch needs no resending (accepted, or refused for good).
        def send_batch(batch, spooled: false)
          refusals = Refusals.new(0, 0)
          settled = send_part(batch, spooled, refusals)
          if refusals.dropped > refusals.named
            @logger.error("... and #{refusals.dropped - refusals.named} more events of the batch refused and dropped")
          end
          settled
        end

        def send_part(batch, spooled, refusals)
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
          return split(batch, spooled, refusals, response) if REFUSED_BODY.include?(response.status)
          if response.status >= 400
            @dropped_refused += batch.size
            @logger.error("jobwatch refused a batch with #{response.status} (#{response.error_text}): dropped #{batch.size} events; " \
                          "#{@dropped_refused} dropped this way since start")
            return true
          end
          delivered(batch, response)
          true
        end

        # A batch refused as a whole: its halves are sent on their own, down to the single events refused.
        def split(batch, spooled, refusals, response)
          if batch.size == 1
            refused_event(batch.first, response, refusals)
            return true
          end
          if refusals.named.zero? && refusals.dropped.zero?
            @logger.warn("jobwatch refused a batch of #{batch.size} events with #{response.status} (#{response.error_text}); " \
                         "sending it again in halves, so that only the events it refuses are dropped")
          end
          half = (batch.size + 1) / 2
          # the second half waits for the first: a failure (an outage) leaves the batch whole for the spool
          send_part(batch.first(half), spooled, refusals) && send_part(batch.drop(half), spooled, refusals)
        end

        # One event jobwatch refuses on its own: dropped, and named.
        def refused_event(line, response, refusals)
          @dropped_refused += 1
          refusals.dropped += 1
          return if refusals.named >= REFUSED_NAMED_MAX
          refusals.named += 1
          error = response.body.is_a?(Hash) && response.body["error"].is_a?(Hash) ? response.body["error"] : {}
          @logger.error("jobwatch refused #{Deliverer.identity(line)} with #{response.status} (#{response.error_text} #{JSON.generate(error["details"] || {})}): " \
                        "dropped this event only; #{@dropped_refused} events dropped this way since start")
        end

        # What identifies an event in the log: its type, the job's jid (the worker's id, the
        # queue's name), state and time. `event`: its JSON text or the Hash itself.
        def self.identity(event)
          parsed = event.is_a?(String) ? JSON.parse(event) : event
          return "an event (#{event.to_s[0, 120]})" unless parsed.is_a?(Hash)
          parsed = parsed.transform_keys(&:to_s)
          payload = parsed["job"] || parsed["worker"] || parsed["queue"] || {}
          payload = payload.is_a?(Hash) ? payload.transform_keys(&:to_s) : {}
          text = ->(value) { (value.is_a?(String) ? value : JSON.generate(value)).to_s[0, 600] }
          state = payload["state"] ? " (#{text.call(payload["state"])})" : ""
          "event #{text.call(parsed["type"])} #{text.call(payload["externalId"] || payload["name"])}#{state} at #{text.call(parsed["timestamp"])}"
        rescue JSON::ParserError, JSON::GeneratorError, EncodingError
          "an event (#{event.to_s[0, 120].inspect})"
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
              event = index.is_a?(Integer) && batch[index] ? Deliverer.identity(batch[index]) : "event #{index}"
              @logger.error("jobwatch rejected #{event}: #{error["code"]} #{error["message"]} #{JSON.generate(error["details"] || {})}")
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
