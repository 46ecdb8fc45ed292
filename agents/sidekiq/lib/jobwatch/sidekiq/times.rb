# Sidekiq 6 and 7 store times as float seconds since the epoch, Sidekiq 8 as integer
# milliseconds; jobwatch wants ISO 8601 in UTC with milliseconds. Everything that turns
# a Sidekiq time into a jobwatch time goes through here, so the two never mix.
module Jobwatch
  module Sidekiq
    module Times
      # Below this a number is seconds: 1e11 seconds is the year 5138, 1e11 ms is 1973.
      MILLISECONDS_FROM = 100_000_000_000

      module_function

      # Seconds since the epoch (Float) from Sidekiq's seconds or milliseconds; nil when absent or not a time.
      def epoch_s(value)
        number =
          case value
          when Numeric then value.to_f
          when String then Float(value, exception: false)
          end
        return nil if number.nil? || !number.finite? || number <= 0
        number >= MILLISECONDS_FROM ? number / 1000.0 : number
      end

      # Rounded to the nearest millisecond: a float like 0.26 is 0.2599999... in binary.
      def iso(seconds)
        Time.at(Rational((seconds * 1000).round, 1000)).utc.strftime("%Y-%m-%dT%H:%M:%S.%LZ")
      end

      # ISO 8601 of a Sidekiq time, or nil.
      def iso_from_native(value)
        seconds = epoch_s(value)
        seconds && iso(seconds)
      end

      def now_s
        Time.now.to_f
      end
    end
  end
end
