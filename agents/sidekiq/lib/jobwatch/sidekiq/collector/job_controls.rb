# Commands on one job, carried out in Sidekiq's sets and queues:
#
# - revoke: a revoke flag goes up first, in one transaction with reading the job's
#   running mark (RevokeFlags). Running in a live process: open-source Sidekiq cannot
#   stop a running thread safely, so it runs on and the command fails with that reason;
#   the flag stays, so its retry will not run. Otherwise the job is deleted from the
#   scheduled, retry or dead set or its queue (recorded `cancelled`); found nowhere, a
#   Sidekiq process has fetched it and the flag skips it before it starts, or it already
#   finished.
# - retry: from the retry set "retry now" (Sidekiq's add_to_queue: the run counts as the
#   retry it was waiting for); from the dead set Sidekiq's retry (the run asked for uses
#   none of its retries).
# - promote: from the scheduled set (or the retry set) to its queue now.
# - delete: from the scheduled, retry or dead set or its queue. A job that would have run
#   is recorded `cancelled`; a dead job had already failed and stays so.
# - kill: from the retry set to the dead set, recorded `failed` with its last error.
#
# Each move removes the one member it found (SetMoves), so a job Sidekiq or another
# client moved meanwhile fails "not found" rather than being reported done.
require "sidekiq/api"
require_relative "../revoke_flags"
require_relative "../job_record"
require_relative "command_input"
require_relative "command_outcome"
require_relative "literal_find"
require_relative "set_moves"
require_relative "sidekiq_scope"

module Jobwatch
  module Sidekiq
    module Collector
      class JobControls
        TYPES = %w[revoke retry promote delete kill].freeze
        SETS = { "scheduled" => ::Sidekiq::ScheduledSet, "retry" => ::Sidekiq::RetrySet, "dead" => ::Sidekiq::DeadSet }.freeze
        # A queue is read from its oldest end; past this many entries a job is not looked for further.
        QUEUE_SCAN_MAX = 100_000

        def initialize(recorder:, scope:)
          @recorder = recorder
          @scope = scope
        end

        def carry_out(id, type, command)
          jid = command["externalId"]
          problem = CommandInput.jid_problem(jid) || CommandInput.optional_queue_problem(command["queue"])
          return CommandOutcome.failed(id, problem) if problem
          queue, refused = @scope.queue_for(jid, command["queue"])
          return CommandOutcome.failed(id, refused) if refused
          case type
          when "revoke" then revoke(id, jid, queue)
          when "retry" then run_now(id, jid, queue, %w[retry dead])
          when "promote" then run_now(id, jid, queue, %w[scheduled retry])
          when "delete" then delete(id, jid, queue)
          when "kill" then kill(id, jid, queue)
          else raise ArgumentError, "not a job command: #{type.inspect}"
          end
        end

        private

        def revoke(id, jid, queue)
          unless @scope.reported.reported?(jid) || sidekiq_has?(jid, queue)
            return CommandOutcome.failed(id, "not a job this collector reported, and Sidekiq has no job #{jid.inspect} in its sets, " \
                                             "#{queue ? "queue #{queue.inspect} " : ""}or running: nothing was done")
          end
          runner = ::Sidekiq.redis { |conn| RevokeFlags.raise_flag(conn, jid) }
          if runner && ::Sidekiq::ProcessSet.new.any? { |process| process["identity"] == runner }
            return CommandOutcome.failed(id, "the job is running in Sidekiq process #{runner}: open-source Sidekiq cannot stop a running job safely, " \
                                             "so this run goes on; it will not be retried")
          end
          SETS.each_key do |where|
            entry = LiteralFind.find_job(set(where), jid)
            return revoked(id, jid, entry.item, "deleted from Sidekiq's #{where} set") if entry && SetMoves.take(entry)
          end
          if queue && (record = find_in_queue(queue, jid)) && SetMoves.take_from_queue(queue, record)
            return revoked(id, jid, record.item, "deleted from Sidekiq queue #{queue}")
          end
          CommandOutcome.done(id, "not in Sidekiq's queue or sets: if a Sidekiq process has fetched it, it is skipped before it starts; " \
                                  "if it already ran, nothing changed")
        end

        def revoked(id, jid, item, how)
          ::Sidekiq.redis { |conn| RevokeFlags.lower_flag(conn, jid) }
          @recorder.record(JobRecord.build("cancelled", item, reason: "revoked from jobwatch: #{how}"))
          CommandOutcome.done(id)
        end

        # Whether Sidekiq shows the job: running (its mark), in a set, or in `queue`.
        def sidekiq_has?(jid, queue)
          return true if running_in(jid)
          return true if SETS.each_key.any? { |where| LiteralFind.find_job(set(where), jid) }
          !queue.nil? && !find_in_queue(queue, jid).nil?
        end

        def run_now(id, jid, queue, places)
          where, entry = locate(jid, places)
          return not_found(id, jid, "its #{places.join(" or ")} set") unless entry
          refused = other_queue(where, entry, queue)
          return CommandOutcome.failed(id, refused) if refused
          # A revoke of this job earlier must not skip the run asked for now.
          ::Sidekiq.redis { |conn| RevokeFlags.lower_flag(conn, jid) }
          return moved_meanwhile(id, where) unless SetMoves.push_now(entry, count_as_retry: where != "dead")
          CommandOutcome.done(id, nil, details: { "from" => where })
        end

        def delete(id, jid, queue)
          where, entry = locate(jid, SETS.keys)
          if entry
            refused = other_queue(where, entry, queue)
            return CommandOutcome.failed(id, refused) if refused
            return moved_meanwhile(id, where) unless SetMoves.take(entry)
            cancelled(entry.item, "removed from Sidekiq's #{where} set") unless where == "dead"
            return CommandOutcome.done(id, nil, details: { "from" => where })
          end
          if queue && (record = find_in_queue(queue, jid))
            return CommandOutcome.failed(id, "not found: a Sidekiq process fetched the job from queue #{queue} meanwhile") unless SetMoves.take_from_queue(queue, record)
            cancelled(record.item, "removed from Sidekiq queue #{queue}")
            return CommandOutcome.done(id, nil, details: { "from" => "queue" })
          end
          runner = running_in(jid)
          return CommandOutcome.failed(id, "the job is running in Sidekiq process #{runner}: a running job cannot be deleted") if runner
          not_found(id, jid, "its scheduled, retry or dead set#{queue ? " or queue #{queue.inspect}" : ""}")
        end

        def kill(id, jid, queue)
          entry = LiteralFind.find_job(set("retry"), jid)
          unless entry
            return CommandOutcome.failed(id, "the job is already in Sidekiq's dead set") if LiteralFind.find_job(set("dead"), jid)
            return not_found(id, jid, "its retry set")
          end
          refused = other_queue("retry", entry, queue)
          return CommandOutcome.failed(id, refused) if refused
          return moved_meanwhile(id, "retry") unless SetMoves.kill(entry)
          item = entry.item
          error = item["error_class"] || item["error_message"] ? "#{item["error_class"]}: #{item["error_message"]}" : nil
          failed_run = item["retry_count"].is_a?(Integer) ? item["retry_count"] + 1 : 1
          @recorder.record(JobRecord.build("dead", item, attempt: failed_run, error: error,
                                                         reason: "killed from jobwatch: moved from Sidekiq's retry set to its dead set"))
          CommandOutcome.done(id)
        end

        def cancelled(item, how)
          @recorder.record(JobRecord.build("cancelled", item, reason: "deleted from jobwatch: #{how}"))
        end

        def set(where)
          SETS.fetch(where).new
        end

        # [set name, entry] of the first of `places` that holds the job, or nil.
        def locate(jid, places)
          places.each do |where|
            entry = LiteralFind.find_job(set(where), jid)
            return [where, entry] if entry
          end
          nil
        end

        def other_queue(where, entry, queue)
          return nil if queue.nil? || entry.item["queue"] == queue
          "the job in Sidekiq's #{where} set is in queue #{entry.item["queue"].to_s[0, 300].inspect}, not #{queue.inspect}: nothing was done"
        end

        def not_found(id, jid, where)
          CommandOutcome.failed(id, "not found: Sidekiq has no job #{jid.inspect} in #{where} (already run, moved or deleted, or trimmed)")
        end

        def moved_meanwhile(id, where)
          CommandOutcome.failed(id, "not found: the job left Sidekiq's #{where} set meanwhile (moved by Sidekiq or another client)")
        end

        # The identity of the process whose running mark the job holds, or nil.
        def running_in(jid)
          ::Sidekiq.redis { |conn| conn.call("GET", RevokeFlags.running_key(jid)) }
        end

        def find_in_queue(queue, jid)
          scanned = 0
          ::Sidekiq::Queue.new(queue).each do |record|
            return record if record.jid == jid
            break if (scanned += 1) >= QUEUE_SCAN_MAX
          end
          nil
        end
      end
    end
  end
end
