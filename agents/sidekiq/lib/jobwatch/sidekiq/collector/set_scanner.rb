# Sidekiq's scheduled, retry and dead sets, read newest first up to a bound per poll,
# fill in what the middleware could not see (jobs pushed by apps without the
# integration, jobs from before it was installed, stream entries trimmed before the
# collector read them). Each entry is reported once per collector run; its event is
# timed by Sidekiq's own timestamps, so a repeat after a restart is the same event and
# jobwatch skips it. A set whose size and newest entry are what they were at the last
# scan is not read again, so a large, quiet dead set costs two commands per poll.
require_relative "normalize"

module Jobwatch
  module Sidekiq
    module Collector
      class SetScanner
        REMEMBERED_MAX = 100_000

        def initialize(scan_max:, sets: nil)
          @scan_max = scan_max
          @sets = sets || { "scheduled" => -> { ::Sidekiq::ScheduledSet.new }, "retry" => -> { ::Sidekiq::RetrySet.new }, "dead" => -> { ::Sidekiq::DeadSet.new } }
          @reported = {}
          @signatures = {}
        end

        def events
          events = []
          @sets.each do |name, open_set|
            set = open_set.call
            signature = signature_of(set)
            next if signature && @signatures[name] == signature
            @signatures[name] = signature
            read = 0
            set.each do |entry|
              break if (read += 1) > @scan_max
              item = entry.item
              key = "#{name}|#{item["jid"]}|#{entry.score}"
              next if @reported.key?(key) || !item["jid"].is_a?(String)
              item = item.merge("error_backtrace" => entry.error_backtrace) if item["error_backtrace"].is_a?(String) && entry.respond_to?(:error_backtrace)
              events << Normalize.set_entry_event(name, item, entry.score)
              remember(key)
            end
          end
          events
        end

        private

        # [size, newest member, its score], or nil when the set cannot say (always read then).
        def signature_of(set)
          return nil unless set.respond_to?(:name) && set.respond_to?(:size)
          newest = ::Sidekiq.redis { |conn| conn.call("ZRANGE", set.name, "-1", "-1", "WITHSCORES") }
          [set.size, newest]
        end

        def remember(key)
          @reported[key] = true
          @reported.shift while @reported.size > REMEMBERED_MAX
        end
      end
    end
  end
end
