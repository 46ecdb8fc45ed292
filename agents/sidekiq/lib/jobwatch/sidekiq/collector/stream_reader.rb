# Reads the integration's stream from the checkpoint, turns each record into an ingest
# event and hands them to the deliverer; the checkpoint moves only once the deliverer
# says they are safe (sent or spooled). A record that cannot be read is logged and
# skipped rather than stopping the stream behind it.
require "json"
require_relative "checkpoint"
require_relative "normalize"
require_relative "../recorder"

module Jobwatch
  module Sidekiq
    module Collector
      class StreamReader
        ENTRIES_PER_READ = 1000
        BLOCK_MS = 500
        # Sidekiq drops a scheduled job's time when it enqueues it; jobwatch keeps only the
        # newest event's extensions, so the time is carried onto the job's later events.
        ETAS_REMEMBERED_MAX = 100_000

        attr_reader :read_total, :skipped_total

        def initialize(stream:, checkpoint:, deliverer:, logger:, redis: ->(&block) { ::Sidekiq.redis(&block) })
          @stream = stream
          @checkpoint = checkpoint
          @deliverer = deliverer
          @logger = logger
          @redis = redis
          @read_total = 0
          @skipped_total = 0
          @etas = {}
        end

        # Says once, at start, whether Redis trimmed entries the checkpoint had not reached.
        def check_for_trimmed_entries
          info = @redis.call { |conn| conn.call("XINFO", "STREAM", @stream) }
          info = info.each_slice(2).to_h if info.is_a?(Array)
          first = info["first-entry"]
          first_id = first.is_a?(Array) ? first[0] : nil
          deleted = info["max-deleted-entry-id"]
          lost = if deleted && deleted != "0-0" then Checkpoint.compare(deleted, @checkpoint.id).positive?
                 elsif first_id && @checkpoint.id != Checkpoint::START then Checkpoint.compare(first_id, @checkpoint.id).positive? && info["entries-added"].to_i > info["length"].to_i
                 else false
                 end
          if lost
            @logger.error("stream #{@stream}: entries after the checkpoint #{@checkpoint.id} were trimmed before they were read " \
                          "(the stream keeps its newest entries only); the scheduled, retry and dead sets fill in what they can. " \
                          "Run the collector continuously or raise JOBWATCH_STREAM_MAX_LENGTH in the app")
          end
          @logger.info("stream #{@stream}: #{info["length"]} entries, resuming after #{@checkpoint.id}")
        rescue StandardError => e
          raise unless e.message.include?("no such key")
          @logger.info("stream #{@stream}: not created yet (no job recorded so far); waiting for the first")
        end

        # One read; returns how many entries it handled. Waits up to BLOCK_MS for new entries.
        def step
          reply = @redis.call do |conn|
            conn.call("XREAD", "COUNT", ENTRIES_PER_READ.to_s, "BLOCK", BLOCK_MS.to_s, "STREAMS", @stream, @checkpoint.id)
          end
          entries = entries_of(reply)
          return 0 if entries.empty?
          events = entries.filter_map { |id, fields| event_of(id, fields) }
          @deliverer.deliver(events)
          @checkpoint.save(entries.last[0])
          @read_total += entries.size
          entries.size
        end

        private

        # XREAD answers [[stream, [[id, [field, value, ...]], ...]]] (a Hash under RESP3).
        def entries_of(reply)
          return [] if reply.nil?
          pairs = reply.is_a?(Hash) ? reply.to_a : reply
          pairs.flat_map { |_, entries| entries || [] }
        end

        def carry_eta(event)
          job = event[:job]
          eta = job[:extensions]["eta"]
          if eta
            @etas.delete(job[:externalId])
            @etas[job[:externalId]] = eta
            @etas.shift while @etas.size > ETAS_REMEMBERED_MAX
          elsif (remembered = @etas[job[:externalId]])
            job[:extensions]["eta"] = remembered
          end
          event
        end

        def event_of(id, fields)
          fields = fields.each_slice(2).to_h if fields.is_a?(Array)
          record = JSON.parse(fields.fetch(Recorder::FIELD))
          carry_eta(Normalize.job_event(record))
        rescue KeyError, JSON::ParserError, Normalize::InvalidRecord, TypeError, NoMethodError => e
          @skipped_total += 1
          @logger.error("stream #{@stream}: skipped entry #{id}: not a jobwatch record (#{e.class}: #{e.message}); #{@skipped_total} skipped since start")
          nil
        end
      end
    end
  end
end
