# Jittered exponential backoff that starts over after a success: half the step plus a
# random half, so many collectors do not retry in step; a server's Retry-After is a floor.
module Jobwatch
  module Sidekiq
    module Collector
      class Backoff
        attr_reader :failures

        def initialize(base_s: 0.25, cap_s: 30.0, random: Random.new)
          @base_s = base_s
          @cap_s = cap_s
          @random = random
          @failures = 0
        end

        def next_delay(retry_after_s = nil)
          step = [@cap_s, @base_s * (2**@failures)].min
          @failures += 1
          delay = step / 2 + @random.rand * step / 2
          retry_after_s ? [delay, retry_after_s].max : delay
        end

        def reset
          @failures = 0
        end
      end
    end
  end
end
