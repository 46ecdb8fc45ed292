# Where a command may act: only in a queue Sidekiq lists (its `queues` set, or consumed
# by a live process: the queues the collector reports), and, for a job the collector
# reported, only in the queue it reported it in. A command names its job by what jobwatch
# was sent, and anyone holding the connection's API key can send jobwatch anything.
require "sidekiq/api"
require_relative "reported_jobs"

module Jobwatch
  module Sidekiq
    module Collector
      class SidekiqScope
        def initialize(reported)
          @reported = reported
        end

        attr_reader :reported

        # The queues the collector reports: Sidekiq's `queues` set and the queues its live processes consume.
        def listed_queue?(queue)
          return true if ::Sidekiq.redis { |conn| conn.call("SISMEMBER", "queues", queue) }.to_i == 1
          ::Sidekiq::ProcessSet.new.any? { |process| Array(process["queues"]).include?(queue) }
        end

        # [the queue to look in for the job (nil for none), why the command is refused (or nil)]:
        # the one the collector reported, else the one the command names.
        def queue_for(jid, named)
          reported = @reported.queue_of(jid)
          if reported && named && named != reported
            return [nil, "the command names queue #{named.inspect}, but the collector reported the job in queue #{reported.inspect}: nothing was done"]
          end
          queue = reported || named
          return [nil, nil] if queue.nil?
          unless listed_queue?(queue)
            return [nil, "queue #{queue.inspect} is not one of Sidekiq's queues (in its `queues` set or consumed by a live process): " \
                         "the collector acts only on the queues it watches; nothing was done"]
          end
          [queue, nil]
        end
      end
    end
  end
end
