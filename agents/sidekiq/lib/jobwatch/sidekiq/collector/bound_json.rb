# Free-form values copied from Sidekiq (a job's retry option and tags, a process's labels)
# made to fit what jobwatch takes in extensions and metadata. jobwatch refuses an event
# whose extensions nest deeper than 8 levels, pass 64 KB or hold a prototype key, and a
# value deep enough refuses the whole request: one job's odd value must never cost other
# jobs' events. So every string is cut, every array and hash bounded in count, anything
# nested too deep replaced, and the whole held under the byte bound by shortening its
# largest values; each cut is marked.
#
# A job's arguments are bounded the same way (bound_payload), with larger bounds and any
# JSON at the top, and their secret-looking keys masked on the way (Redaction): the walk
# that bounds them is the one that masks them.
#
# The rule is the same in the three agents (agents/bounding-cases.json holds cases each
# agent's tests run), so jobwatch shows a value cut alike whichever agent sent it.
require "json"
require_relative "limits"
require_relative "redaction"

module Jobwatch
  module Sidekiq
    module Collector
      module BoundJson
        module_function

        # A copy of `value` (a Hash; anything else gives {}) within `bounds` (Limits::AGENT_BOUNDS by default),
        # the values of keys `redactor` matches masked.
        def bound(value, bounds = {}, redactor = nil)
          limits = Limits::AGENT_BOUNDS.merge(bounds.transform_keys(&:to_s))
          return {} unless value.is_a?(Hash)
          fit_bytes(bound_value(value, 1, limits, redactor), limits)
        end

        # A job's arguments (any JSON) within `bounds` (Limits::PAYLOAD_BOUNDS by default), the
        # values of keys `redactor` matches masked. Past `bytesMax` the largest value gives way
        # first, as in `bound`, except that it is shortened rather than replaced where it can be
        # (a string cut, an array or hash shortened inside by the same rule), so one large
        # argument costs only what it must of itself, and nothing of its neighbours.
        def bound_payload(value, bounds = {}, redactor = nil)
          limits = Limits::PAYLOAD_BOUNDS.merge(bounds.transform_keys(&:to_s))
          bounded = bound_value(value, 1, limits, redactor)
          size = bytes_of(bounded)
          return bounded if size <= limits["bytesMax"]
          shrink(bounded, size, limits["bytesMax"]) || Limits.truncated_mark("#{size} bytes")
        end

        def bound_value(value, depth, bounds, redactor = nil)
          case value
          when nil, true, false, Integer then value
          when Float then value.finite? ? value : nil
          when String then Limits.cut_marked(value, bounds["stringChars"])
          when Array, Hash then bound_container(value, depth, bounds, redactor)
          else Limits.cut_marked(value.to_s, bounds["stringChars"])
          end
        end

        def bound_container(value, depth, bounds, redactor = nil)
          return Limits.truncated_mark("deeper than #{bounds["depthMax"]} levels") if depth > bounds["depthMax"]
          if value.is_a?(Array)
            kept = value.first(bounds["arrayItemsMax"]).map { |item| bound_value(item, depth + 1, bounds, redactor) }
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
            masked = !redactor.nil? && redactor.matches?(name)
            out[Limits.cut_marked(name, bounds["keyChars"])] = masked ? Redaction::REDACTED : bound_value(item, depth + 1, bounds, redactor)
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

        # `value` (serialized in `size` bytes, more than `budget`) brought within `budget`, or nil
        # when nothing can be: a string is cut (the longest head that fits, marked); an array or
        # hash gives up its largest values first, each shortened by this same rule when it can
        # give up the whole excess, else replaced by a mark of its size; what still does not fit
        # becomes one such mark.
        def shrink(value, size, budget)
          if value.is_a?(String)
            head = head_within(value, budget)
            return head if head
          elsif (value.is_a?(Array) || value.is_a?(Hash)) && !value.empty?
            keys = value.is_a?(Hash) ? value.keys : (0...value.size).to_a
            by_size = keys.each_with_index.map { |key, index| [bytes_of(value[key]), index, key] }.sort_by { |bytes, index, _| [-bytes, index] }
            total = size
            by_size.each do |item_bytes, _, key|
              room = item_bytes - (total - budget)
              replacement = room.positive? ? shrink(value[key], item_bytes, room) : nil
              if replacement.nil?
                replacement = Limits.truncated_mark("#{item_bytes} bytes")
                next if bytes_of(replacement) >= item_bytes
              end
              value[key] = replacement
              total -= item_bytes - bytes_of(replacement)
              return value if total <= budget
            end
          end
          mark = Limits.truncated_mark("#{size} bytes")
          bytes_of(mark) <= budget ? mark : nil
        end

        # The longest head of `text`, marked as cut, whose JSON fits `budget` bytes (a binary
        # search: a longer head is never smaller); nil when not even one character does.
        def head_within(text, budget)
          low = Limits::TRUNCATED_MARK.length + 1
          high = Limits.utf16_units(text) - 1
          return nil if high < low || bytes_of(Limits.cut_marked(text, low)) > budget
          while low < high
            middle = (low + high + 1) / 2
            if bytes_of(Limits.cut_marked(text, middle)) <= budget
              low = middle
            else
              high = middle - 1
            end
          end
          Limits.cut_marked(text, low)
        end

        def bytes_of(value)
          JSON.generate(value).bytesize
        end
      end
    end
  end
end
