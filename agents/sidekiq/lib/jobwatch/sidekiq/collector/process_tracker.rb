# Sidekiq processes as jobwatch workers. Each poll sends every live process's state
# (online when first seen, then busy or idle with its busy count), so its heartbeat in
# jobwatch is never older than the poll interval, well inside jobwatch's 6 s rule.
#
# A process is live while its own heartbeat (`beat`) keeps changing. Sidekiq keeps a
# dead process's record for up to 60 s, so "in the process set" is not enough: a beat
# that has not moved for twice the gap seen between its beats (Sidekiq 6 beats every
# 5 s, 7 every 10 s), and never more than `stale_s`, means the process died. Measured
# on this collector's monotonic clock, so clock skew between hosts does not matter. It
# is reported offline once, and the jobs it was running are reported failed as lost
# (open-source Sidekiq does not run them again). A process that left the set stopped
# cleanly; its unfinished jobs went back to their queues.
require_relative "normalize"
require_relative "../times"

module Jobwatch
  module Sidekiq
    module Collector
      class ProcessTracker
        Seen = Struct.new(:process, :beat, :beat_changed_at, :beat_gap_s, :beat_changes, :online, :offline, :running, keyword_init: true)
        PROCESSES_TRACKED_MAX = 10_000
        # jobwatch's own offline rule; a beat never seen to move is judged by stale_s alone.
        STALE_FLOOR_S = 6.0

        def initialize(stale_s:, logger:, clock: -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) })
          @stale_s = stale_s
          @logger = logger
          @clock = clock
          @seen = {}
        end

        # processes: Sidekiq process hashes (identity, hostname, pid, busy, beat, ...);
        # running: [[process identity, job hash], ...]. Returns the ingest events of this poll.
        def observe(processes, running, now_s: Times.now_s)
          mono = @clock.call
          running_by_process = running.group_by(&:first)
          events = []
          present = {}
          processes.each do |process|
            identity = process["identity"].to_s
            next if identity.empty?
            present[identity] = true
            seen = @seen[identity]
            beat = Times.epoch_s(process["beat"])
            if seen.nil?
              # First sight: the beat's age on the wall clock is all there is to go on.
              age_s = beat ? now_s - beat : 0
              seen = Seen.new(process: process, beat: beat, beat_changed_at: mono - [age_s, 0].max, beat_gap_s: nil, beat_changes: 0,
                              online: false, offline: false, running: [])
              @seen[identity] = seen
            elsif beat != seen.beat
              # A gap runs between two changes this collector saw; first sight is not a change.
              seen.beat_gap_s = [seen.beat_gap_s || 0, mono - seen.beat_changed_at].max if seen.beat_changes.positive?
              seen.beat_changes += 1
              seen.beat = beat
              seen.beat_changed_at = mono
              seen.offline = false if seen.offline
            end
            if mono - seen.beat_changed_at > stale_after_s(seen)
              events.concat(went_offline(identity, seen, now_s)) unless seen.offline
              next
            end
            seen.process = process
            seen.running = (running_by_process[identity] || []).map(&:last)
            unless seen.online
              events << Normalize.worker_event(process, "online", now_s)
              seen.online = true
              @logger.info("worker #{identity}: online (#{process["concurrency"]} threads, queues #{Array(process["queues"]).join(",")})")
            end
            events << Normalize.worker_event(process, process["busy"].to_i.positive? ? "busy" : "idle", now_s)
          end
          (@seen.keys - present.keys).each do |identity|
            seen = @seen.delete(identity)
            next if seen.offline
            @logger.info("worker #{identity}: left Sidekiq's process set (stopped); offline")
            events << Normalize.worker_event(seen.process, "offline", now_s)
          end
          @seen.shift while @seen.size > PROCESSES_TRACKED_MAX
          events
        end

        # Live processes (as last seen) for the queue snapshots' consumer counts.
        def live_processes
          @seen.values.reject(&:offline).select(&:online).map(&:process)
        end

        private

        def stale_after_s(seen)
          return @stale_s unless seen.beat_gap_s
          (2 * seen.beat_gap_s).clamp(STALE_FLOOR_S, @stale_s)
        end

        def went_offline(identity, seen, now_s)
          seen.offline = true
          seen.online = false
          events = [Normalize.worker_event(seen.process, "offline", now_s)]
          lost_at_s = seen.beat || now_s
          seen.running.each do |job|
            events << Normalize.lost_job_event(job, identity, lost_at_s) if job["jid"].is_a?(String)
          end
          @logger.warn(format("worker %s: no heartbeat for %.1fs (killed or crashed?); offline", identity, @clock.call - seen.beat_changed_at) + \
                       "#{seen.running.empty? ? "" : ", #{seen.running.size} running job#{"s" if seen.running.size > 1} reported lost"}")
          seen.running = []
          events
        end
      end
    end
  end
end
