# Every poll interval: Sidekiq's processes as workers, its queues as queue snapshots
# (depth, consumers, latency and whether paused), and its sets as job states, all through Sidekiq's own API.
require_relative "normalize"
require_relative "process_tracker"
require_relative "set_scanner"
require_relative "../compat"
require_relative "../times"

module Jobwatch
  module Sidekiq
    module Collector
      class Poller
        QUEUES_MAX = 1000

        def initialize(deliverer:, logger:, stale_s:, set_scan_max:)
          @deliverer = deliverer
          @logger = logger
          @processes = ProcessTracker.new(stale_s: stale_s, logger: logger)
          @sets = SetScanner.new(scan_max: set_scan_max)
          @latency_unreadable = {}
        end

        def step
          now_s = Times.now_s
          processes = ::Sidekiq::ProcessSet.new.map { |process| process_hash(process) }
          events = @processes.observe(processes, Compat.running_jobs, now_s: now_s)
          events.concat(queue_events(now_s))
          events.concat(@sets.events)
          @deliverer.deliver(events)
          events.size
        end

        private

        def process_hash(process)
          hash = {}
          %w[identity hostname pid concurrency busy queues beat tag version labels started_at quiet rss].each { |key| hash[key] = process[key] }
          hash["identity"] ||= process.identity if process.respond_to?(:identity)
          hash
        end

        def queue_events(now_s)
          consumers = Hash.new(0)
          @processes.live_processes.each { |process| Array(process["queues"]).uniq.each { |queue| consumers[queue] += 1 } }
          queues = ::Sidekiq::Queue.all.first(QUEUES_MAX).to_h { |queue| [queue.name, queue] }
          (queues.keys | consumers.keys).first(QUEUES_MAX).map do |name|
            queue = queues[name] || ::Sidekiq::Queue.new(name)
            Normalize.queue_event(name, queue.size, consumers[name], now_s, latency_s: latency_s(queue), paused: paused?(queue))
          end
        end

        # Sidekiq's own answer: false in open-source Sidekiq, the queue's state where Sidekiq
        # Pro overrides it; nil (left out) if it cannot be read.
        def paused?(queue)
          paused = queue.paused?
          paused == true || paused == false ? paused : nil
        rescue StandardError
          nil
        end

        # Sidekiq reads it from the oldest job's enqueued_at; a payload it cannot parse must
        # not stop the poll, so the snapshot then goes without it (said once per queue).
        def latency_s(queue)
          latency = queue.latency
          @latency_unreadable.delete(queue.name)
          latency
        rescue StandardError => e
          unless @latency_unreadable.key?(queue.name) || @latency_unreadable.size >= QUEUES_MAX
            @latency_unreadable[queue.name] = true
            @logger.warn("queue #{queue.name}: latency unreadable (#{e.class}: #{e.message}); its snapshots go without it")
          end
          nil
        end
      end
    end
  end
end
