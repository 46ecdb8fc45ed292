# Moves of one job out of a Sidekiq sorted set (scheduled, retry, dead) or queue that
# say whether they happened. Sidekiq's own SortedEntry#retry, #add_to_queue and #kill
# take every member of the entry's score and put back the others, and return nothing
# either way; here the one member is removed by its exact value (ZREM, LREM), so of two
# collectors or a collector and Sidekiq Web acting at once exactly one moves the job, and
# the one that did not knows it. A push that fails after the removal puts the member back.
require "json"
require "sidekiq/api"

module Jobwatch
  module Sidekiq
    module Collector
      module SetMoves
        module_function

        # Removes `entry` (a Sidekiq::SortedEntry) from its set; true when this call removed it.
        def take(entry)
          ::Sidekiq.redis { |conn| conn.call("ZREM", entry.parent.name, entry.value) }.to_i == 1
        end

        # Removes a queue's entry (a Sidekiq::JobRecord read from `queue`); true when this call removed it.
        def take_from_queue(queue, record)
          ::Sidekiq.redis { |conn| conn.call("LREM", "queue:#{queue}", "1", record.value) }.to_i == 1
        end

        # Takes `entry` and pushes its job to its queue with Sidekiq's client (the client
        # middleware records it enqueued). `count_as_retry: false` is Sidekiq's own retry of a
        # dead job: the run asked for does not use up one of its retries. True when moved.
        def push_now(entry, count_as_retry: true)
          return false unless take(entry)
          job = JSON.parse(entry.value)
          job.delete("at")
          job["retry_count"] -= 1 if !count_as_retry && job["retry_count"].is_a?(Integer)
          restoring(entry) { ::Sidekiq::Client.push(job) or raise "a client middleware stopped the push" }
          true
        end

        # Takes `entry` from the retry set into the dead set, without Sidekiq's death
        # handlers (the collector records the job's death itself). True when moved.
        def kill(entry)
          return false unless take(entry)
          restoring(entry) { ::Sidekiq::DeadSet.new.kill(entry.value, notify_failure: false) }
          true
        end

        def restoring(entry)
          yield
        rescue StandardError
          ::Sidekiq.redis { |conn| conn.call("ZADD", entry.parent.name, entry.score.to_s, entry.value) }
          raise
        end
      end
    end
  end
end
