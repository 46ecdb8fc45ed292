# Jobs of Sidekiq's scheduled, retry or dead set found by a field's text, matched
# literally. Sidekiq's own SortedSet#find_job scans with `MATCH *<jid>*`, a glob: a jid
# holding `*`, `?`, `[`, `]` or `\` matches other members, or misses its own (a retry of
# `report[1]` found nothing). Here the text is matched as Sidekiq wrote it into the
# member (its JSON text), with the glob characters escaped, and each candidate's parsed
# field compared by the caller.
require "json"

module Jobwatch
  module Sidekiq
    module Collector
      module LiteralFind
        GLOB = /[*?\[\]\\]/.freeze
        SCAN_COUNT = "100"

        module_function

        # `text` as a SCAN MATCH pattern that matches exactly it.
        def glob_escape(text)
          text.gsub(GLOB) { |char| "\\#{char}" }
        end

        # The set's entry of `jid`, or nil. `set`: a Sidekiq::SortedSet (scheduled, retry, dead).
        def find_job(set, jid)
          each_containing(set, jid) { |entry| return entry if entry.item["jid"] == jid }
          nil
        end

        # Yields each entry (a Sidekiq::SortedEntry whose item is a Hash) of `set` whose
        # member holds `text` as JSON writes it: candidates, whose fields the caller compares.
        # Yields outside the scan's Redis call, so the block may change the set (a member
        # removed while the scan goes on does not hide the others: SCAN returns every member
        # present for the whole scan).
        def each_containing(set, text)
          pattern = "*#{glob_escape(JSON.generate(text)[1..-2])}*"
          cursor = "0"
          loop do
            cursor, flat = ::Sidekiq.redis { |conn| conn.call("ZSCAN", set.name, cursor, "MATCH", pattern, "COUNT", SCAN_COUNT) }
            Array(flat).each_slice(2) do |member, score|
              item = begin
                JSON.parse(member)
              rescue JSON::ParserError
                next
              end
              yield ::Sidekiq::SortedEntry.new(set, Float(score), member) if item.is_a?(Hash)
            end
            break if cursor.to_s == "0"
          end
        end
      end
    end
  end
end
