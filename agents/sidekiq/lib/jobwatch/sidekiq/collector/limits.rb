# jobwatch's ingest field limits, counted the way the service counts them (JavaScript's
# string length: UTF-16 code units), and the bounds of what the collector copies from
# Sidekiq. The same figures are in agents/ingest-limits.json, which the tests hold these
# against (and a test of the service holds that file against its ingest schema), so the
# agents cannot drift from the service or from each other.
module Jobwatch
  module Sidekiq
    module Collector
      module Limits
        FIELDS = { externalId: 512, name: 1024, queue: 255, workerId: 512, hostname: 255, error: 10_000, stacktrace: 50_000 }.freeze
        QUEUES_PER_WORKER_MAX = 256
        INGEST_EVENTS_MAX = 1000
        INGEST_BODY_BYTES_MAX = 5 * 1024 * 1024
        # Keys the service refuses in extensions and metadata.
        FORBIDDEN_KEYS = %w[__proto__ constructor prototype].freeze
        # What the collector copies from Sidekiq into extensions or metadata is cut to these,
        # within the service's 64 KB and 8 levels (bytes with room to spare for another serializer).
        AGENT_BOUNDS = {
          "bytesMax" => 60_000,
          "depthMax" => 8,
          "stringChars" => 4096,
          "keyChars" => 128,
          "arrayItemsMax" => 100,
          "objectKeysMax" => 100,
        }.freeze
        # A job's arguments are cut to these, within what jobwatch keeps of them (64 KiB): past
        # them jobwatch would keep a cut head that is no longer JSON.
        PAYLOAD_BOUNDS = {
          "bytesMax" => 60_000,
          "depthMax" => 16,
          "stringChars" => 16_384,
          "keyChars" => 256,
          "arrayItemsMax" => 1000,
          "objectKeysMax" => 1000,
        }.freeze
        # Ends every value the collector shortened, so a reader sees that something was left out.
        TRUNCATED_MARK = "\u2026[truncated]".freeze

        module_function

        # The mark with what was left out: `…[truncated: 3 more items]`.
        def truncated_mark(detail)
          "#{TRUNCATED_MARK[0..-2]}: #{detail}]"
        end

        # `text` as valid UTF-8: Sidekiq's payloads are the app's, and JSON.generate raises on
        # an invalid byte, which would stop a whole batch; such bytes become U+FFFD.
        def utf8(text)
          text = text.to_s
          if text.encoding == Encoding::UTF_8 || text.encoding == Encoding::BINARY || text.encoding == Encoding::US_ASCII
            text = text.dup.force_encoding(Encoding::UTF_8) unless text.encoding == Encoding::UTF_8
            text.valid_encoding? ? text : text.scrub("\uFFFD")
          else
            text.encode(Encoding::UTF_8, invalid: :replace, undef: :replace, replace: "\uFFFD")
          end
        end

        # The length the service counts: characters past U+FFFF are two UTF-16 units.
        def utf16_units(text)
          text.ascii_only? ? text.length : text.length + text.each_char.count { |char| char.ord > 0xFFFF }
        end

        # `text` cut to `limit` UTF-16 units, never inside a character.
        def cut(text, limit)
          text = utf8(text)
          return text if text.length * 2 <= limit
          head = text[0, limit] # each character is at least one unit: the cut lies within these
          return head if head.ascii_only?
          units = 0
          kept = 0
          head.each_char do |char|
            step = char.ord > 0xFFFF ? 2 : 1
            break if units + step > limit
            units += step
            kept += 1
          end
          head[0, kept]
        end

        # `text` within `limit` UTF-16 units; when it was longer, cut and ended with
        # TRUNCATED_MARK (just cut where the limit is too short to hold the mark).
        def cut_marked(text, limit)
          text = utf8(text)
          return text if text.length * 2 <= limit || (text.length <= limit && utf16_units(text) <= limit)
          return cut(text, limit) if limit <= TRUNCATED_MARK.length
          cut(text, limit - TRUNCATED_MARK.length) + TRUNCATED_MARK
        end

        # A contract field cut to its limit, with the mark.
        def field(text, name)
          cut_marked(text, FIELDS.fetch(name))
        end
      end
    end
  end
end
