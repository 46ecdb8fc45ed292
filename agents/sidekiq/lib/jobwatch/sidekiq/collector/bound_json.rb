# Free-form values copied from Sidekiq (a job's retry option and tags, a process's labels)
# made to fit what jobwatch takes in extensions and metadata. jobwatch refuses an event
# whose extensions nest deeper than 8 levels, pass 64 KB or hold a prototype key, and a
# value deep enough refuses the whole request: one job's odd value must never cost other
# jobs' events. So every string is cut, every array and hash bounded in count, anything
# nested too deep replaced, and the whole held under the byte bound by shortening its
# largest values; each cut is marked.
#
# The rule is the same in the three agents (agents/bounding-cases.json holds cases each
# agent's tests run), so jobwatch shows a value cut alike whichever agent sent it.
require "json"
require_relative "limits"

module Jobwatch
  module Sidekiq
    module Collector
      module BoundJson
        module_function

        # A copy of `value` (a Hash; anything else gives {}) within `bounds` (Limits::AGENT_BOUNDS by default).
        def bound(value, bounds = {})
          limits = Limits::AGENT_BOUNDS.merge(bounds.transform_keys(&:to_s))
          return {} unless value.is_a?(Hash)
          fit_bytes(bound_value(value, 1, limits), limits)
        end

        def bound_value(value, depth, bounds)
          case value
          when nil, true, false, Integer then value
          when Float then value.finite? ? value : nil
          when String then Limits.cut_marked(value, bounds["stringChars"])
          when Array, Hash then bound_container(value, depth, bounds)
          else Limits.cut_marked(value.to_s, bounds["stringChars"])
          end
        end

        def bound_container(value, depth, bounds)
          return Limits.truncated_mark("deeper than #{bounds["depthMax"]} levels") if depth > bounds["depthMax"]
          if value.is_a?(Array)
            kept = value.first(bounds["arrayItemsMax"]).map { |item| bound_value(item, depth + 1, bounds) }
            kept << Limits.truncated_mark("#{value.size - bounds["arrayItemsMax"]} more items") if value.size > bounds["arrayItemsMax"]
            return kept
          end
          out = {}
          kept = 0
          left = 0
          value.each do |key, item|
            name = Limits.utf8(key.to_s)
            if Limits::FORBIDDEN_KEYS.include?(name) || kept >= bounds["objectKeysMax"]
              left += 1
              next
            end
            kept += 1
            out[Limits.cut_marked(name, bounds["keyChars"])] = bound_value(item, depth + 1, bounds)
          end
          out[Limits::TRUNCATED_MARK] = "#{left} keys left out" if left.positive?
          out
        end

        # Past `bytesMax` serialized, the largest values (top level) are replaced by a mark saying their size, largest first.
        def fit_bytes(value, bounds)
          size = bytes_of(value)
          return value if size <= bounds["bytesMax"]
          by_size = value.each_with_index.map { |(key, item), index| [bytes_of(item), index, key] }.sort_by { |bytes, index, _| [-bytes, index] }
          by_size.each do |bytes, _, key|
            mark = Limits.truncated_mark("#{bytes} bytes")
            mark_bytes = bytes_of(mark)
            next if bytes <= mark_bytes
            value[key] = mark
            size -= bytes - mark_bytes
            return value if size <= bounds["bytesMax"]
          end
          { Limits::TRUNCATED_MARK => "#{size} bytes left out" }
        end

        def bytes_of(value)
          JSON.generate(value).bytesize
        end
      end
    end
  end
end
