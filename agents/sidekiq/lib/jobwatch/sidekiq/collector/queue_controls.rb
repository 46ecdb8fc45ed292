# Commands on one of Sidekiq's queues:
#
# - queue.clean `{mode: "waiting"}`: clears the queue (every job waiting in it). The list
#   is renamed aside in one step, so a job pushed meanwhile stays and one a process
#   fetched meanwhile runs; the queue stays one of Sidekiq's (still listed, depth 0). Each
#   removed job is recorded `cancelled`, up to CANCELLED_RECORDS_MAX per clean.
# - queue.clean `{mode: "finished"}`: unsupported, Sidekiq keeps no finished jobs.
# - queue.retry_failed: Sidekiq's retry of every job of that queue in the dead set.
#
# Only a queue Sidekiq lists is touched; any other is "not found".
require "json"
require "securerandom"
require "sidekiq/api"
require_relative "../revoke_flags"
require_relative "../job_record"
require_relative "capabilities"
require_relative "command_input"
require_relative "command_outcome"
require_relative "literal_find"
require_relative "set_moves"
require_relative "sidekiq_scope"

module Jobwatch
  module Sidekiq
    module Collector
      class QueueControls
        TYPES = %w[queue.clean queue.retry_failed].freeze
        # jobwatch learns of each job a clean removed; past this many it is told of no more
        # (the stream it goes through keeps 100,000 entries, shared with every running job).
        CANCELLED_RECORDS_MAX = 10_000
        # Sidekiq keeps 10,000 dead jobs by default: one command retries at most that many.
        RETRY_ALL_MAX = 10_000
        PAGE = 500
        # A renamed-aside list left by a collector stopped in the middle of a clean is gone after a day.
        ASIDE_TTL_S = 24 * 3600
        ASIDE_PREFIX = "jobwatch:sidekiq:cleared:"
        # KEYS[1]: the queue's list, KEYS[2]: where it goes aside. The length of what was set aside, 0 for an empty queue.
        SET_ASIDE = <<~LUA
          if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
          redis.call('RENAME', KEYS[1], KEYS[2])
          redis.call('EXPIRE', KEYS[2], ARGV[1])
          return redis.call('LLEN', KEYS[2])
        LUA

        def initialize(recorder:, scope:, logger:)
          @recorder = recorder
          @scope = scope
          @logger = logger
        end

        def carry_out(id, type, command)
          queue = command["queue"]
          refused = type == "queue.clean" && mode_refusal(id, command["params"])
          return refused if refused
          problem = CommandInput.queue_problem(queue)
          return CommandOutcome.failed(id, problem) if problem
          unless @scope.listed_queue?(queue)
            return CommandOutcome.failed(id, "not found: #{queue.inspect} is not one of Sidekiq's queues (in its `queues` set or consumed by a live process): nothing was done")
          end
          case type
          when "queue.clean" then clear(id, queue)
          when "queue.retry_failed" then retry_dead(id, queue)
          else raise ArgumentError, "not a queue command: #{type.inspect}"
          end
        end

        private

        # The answer to a clean Sidekiq cannot do or that names no mode, or nil for `waiting`.
        def mode_refusal(id, params)
          mode = params.is_a?(Hash) ? params["mode"] : nil
          return nil if mode == "waiting"
          return CommandOutcome.unsupported(id, Capabilities::CLEAN_FINISHED_REASON) if mode == "finished"
          CommandOutcome.failed(id, "params.mode must be \"waiting\" or \"finished\", not #{mode.to_s[0, 50].inspect}: nothing was done")
        end

        def clear(id, queue)
          aside = "#{ASIDE_PREFIX}#{SecureRandom.hex(12)}"
          removed = ::Sidekiq.redis { |conn| conn.call("EVAL", SET_ASIDE, "2", "queue:#{queue}", aside, ASIDE_TTL_S.to_s) }.to_i
          recorded = record_cancelled(aside, queue, removed)
          ::Sidekiq.redis { |conn| conn.call("UNLINK", aside) }
          details = { "removed" => removed }
          return CommandOutcome.done(id, nil, details: details) if recorded == removed
          @logger.warn("commands: the clean of queue #{queue} removed #{removed} jobs; jobwatch is told of the first #{recorded} only")
          CommandOutcome.done(id, "removed #{removed} jobs; jobwatch shows the first #{recorded} cancelled, the others as they were",
                              details: details.merge("recordedCancelled" => recorded))
        end

        # Records `cancelled` for the jobs set aside, oldest first (Sidekiq pushes to the
        # head and fetches from the tail); returns how many.
        def record_cancelled(aside, queue, count)
          recorded = 0
          stop = [count, CANCELLED_RECORDS_MAX].min
          while recorded < stop
            from = -(recorded + [PAGE, stop - recorded].min)
            page = ::Sidekiq.redis { |conn| conn.call("LRANGE", aside, from.to_s, (-recorded - 1).to_s) }
            break if page.empty?
            page.reverse_each do |payload|
              item = parse(payload)
              @recorder.record(JobRecord.build("cancelled", item, reason: "deleted from jobwatch: queue #{queue} cleared")) if item
            end
            recorded += page.size
          end
          recorded
        end

        def retry_dead(id, queue)
          dead = ::Sidekiq::DeadSet.new
          retried = 0
          LiteralFind.each_containing(dead, queue) do |entry|
            next unless entry.item["queue"] == queue
            ::Sidekiq.redis { |conn| RevokeFlags.lower_flag(conn, entry.jid) } if entry.jid.is_a?(String)
            retried += 1 if SetMoves.push_now(entry, count_as_retry: false)
            break if retried >= RETRY_ALL_MAX
          end
          details = { "retried" => retried }
          return CommandOutcome.done(id, nil, details: details) if retried < RETRY_ALL_MAX
          CommandOutcome.done(id, "retried #{retried} dead jobs, the most one command retries: send it again for the rest", details: details)
        end

        def parse(payload)
          item = JSON.parse(payload)
          item.is_a?(Hash) && item["jid"].is_a?(String) ? item : nil
        rescue JSON::ParserError
          nil
        end
      end
    end
  end
end
