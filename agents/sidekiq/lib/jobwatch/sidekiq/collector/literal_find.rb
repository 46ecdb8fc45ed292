# A job of Sidekiq's scheduled, retry or dead set by its jid, matched literally. Sidekiq's
# own SortedSet#find_job scans with `MATCH *<jid>*`, a glob: a jid holding `*`, `?`, `[`,
# `]` or `\` matches other members, or misses its own (a retry of `report[1]` found
# nothing). Here the jid is matched as Sidekiq wrote it into the member (its JSON text),
# with the glob characters escaped, and each candidate's parsed jid compared.
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
          pattern = "*#{glob_escape(JSON.generate(jid)[1..-2])}*"
          ::Sidekiq.redis do |conn|
            cursor = "0"
            loop do
              cursor, flat = conn.call("ZSCAN", set.name, cursor, "MATCH", pattern, "COUNT", SCAN_COUNT)
              Array(flat).each_slice(2) do |member, score|
                item = begin
                  JSON.parse(member)
                rescue JSON::ParserError
                  next
                end
                return ::Sidekiq::SortedEntry.new(set, Float(score), member) if item.is_a?(Hash) && item["jid"] == jid
              end
              break if cursor.to_s == "0"
            end
          end
          nil
        end
      end
    end
  end
end
