# Sidekiq's scheduled, retry and dead sets, read newest first up to a bound per poll,
# fill in what the middleware could not see (jobs pushed by apps without the
# integration, jobs from before it was installed, stream entries trimmed before the
# collector read them). Each entry is reported once per collector run; its event is
# timed by Sidekiq's own timestamps, so a repeat after a restart is the same event and
# jobwatch skips it.
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
        end

        def events
          events = []
          @sets.each do |name, open_set|
            read = 0
            open_set.call.each do |entry|
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

        def remember(key)
          @reported[key] = true
          @reported.shift while @reported.size > REMEMBERED_MAX
        end
      end
    end
  end
end
