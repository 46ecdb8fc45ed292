# The jobs the collector reported to jobwatch, and the queue it named for each: a revoke
# may act on a job Sidekiq can no longer show (fetched by a process, not started yet) only
# when the collector reported that job itself. Bounded: the least recently reported are
# forgotten, and a job forgotten (or reported before a restart) must be confirmed by
# Sidekiq instead.
module Jobwatch
  module Sidekiq
    module Collector
      class ReportedJobs
        REMEMBERED_MAX = 100_000

        def initialize(max: REMEMBERED_MAX)
          @max = max
          @queues = {}
          @lock = Mutex.new
        end

        # Learns from events about to be delivered (job events name their jid and queue).
        def learn(events)
          @lock.synchronize do
            events.each do |event|
              job = event[:job] || event["job"]
              next unless job.is_a?(Hash)
              jid = job[:externalId] || job["externalId"]
              next unless jid.is_a?(String)
              @queues.delete(jid)
              @queues[jid] = job[:queue] || job["queue"]
            end
            @queues.shift while @queues.size > @max
          end
        end

        def reported?(jid)
          @lock.synchronize { @queues.key?(jid) }
        end

        # The queue the collector reported the job in (nil when it named none or never reported it).
        def queue_of(jid)
          @lock.synchronize { @queues[jid] }
        end
      end
    end
  end
end
