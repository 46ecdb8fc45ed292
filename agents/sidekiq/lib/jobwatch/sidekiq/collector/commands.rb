# Revoke and retry from jobwatch, carried out with Sidekiq's own API and acknowledged
# with an outcome.
#
# Revoke: a revoke flag goes up first, in one transaction with reading the job's
# running mark (see RevokeFlags). Running (in a live process): open-source Sidekiq
# cannot stop a running thread safely, so it runs on and the command is acknowledged
# `failed` with that reason; the flag stays, so a retry of it will not run. Otherwise
# the job is deleted from the scheduled, retry or dead set or its queue: done, and
# recorded `cancelled`. Found nowhere: a Sidekiq process has fetched it and the flag
# skips it before it starts, or it already finished; done, with that reason.
#
# Retry: Sidekiq's own retry moves the job from the retry or dead set back to its queue.
#
# A command whose ack was lost is not carried out twice: its outcome is remembered and
# sent again. While Redis cannot be reached a command is left unacknowledged (with the
# ones behind it, to keep their order) and comes back at the next poll.
#
# A command names its job by what jobwatch was sent, and anyone holding the connection's
# API key can send jobwatch anything. So its jid and queue are checked before any Redis
# key is built from them; the collector acts only in a queue Sidekiq lists (its `queues`
# set and the queues of its live processes: the queues the collector reports), and only on
# a job it reported itself or that Sidekiq shows (in a set, in that queue, or running).
# Anything else is acknowledged `failed` with the reason, and nothing in Redis is touched.
require_relative "../revoke_flags"
require_relative "../job_record"
require_relative "../compat"
require_relative "http_client"
require_relative "limits"
require_relative "literal_find"
require_relative "reported_jobs"

module Jobwatch
  module Sidekiq
    module Collector
      class Commands
        Outcome = Struct.new(:id, :status, :reason) do
          def to_json_hash
            body = { "id" => id, "status" => status }
            body["reason"] = reason[0, REASON_CHARS] if reason
            body
          end
        end
        COMMANDS_PER_POLL = 100
        REASON_CHARS = 1000
        # The service caps an ack body at 128 KiB: 20 outcomes with 1,000-character reasons always fit.
        ACK_OUTCOMES_PER_REQUEST = 20
        UNACKED_OUTCOMES_MAX = 10_000
        QUEUE_SCAN_MAX = 100_000
        CONTROL = /[\u0000-\u001f\u007f-\u009f]/.freeze

        # reported: the jobs the collector reported (ReportedJobs)
        def initialize(client:, logger:, recorder:, reported: ReportedJobs.new)
          @client = client
          @logger = logger
          @recorder = recorder
          @reported = reported
          @unreachable = false
          @unacked = {}
        end

        # Fetches pending commands, carries them out, acknowledges; returns how many were acknowledged.
        def step
          response = begin
            @client.get("/api/agent/commands?limit=#{COMMANDS_PER_POLL}")
          rescue NetworkError => e
            @logger.warn("commands: jobwatch unreachable (#{e.message}); polling on") unless @unreachable
            @unreachable = true
            return 0
          end
          @logger.info("commands: jobwatch reachable again") if @unreachable
          @unreachable = false
          if response.status != 200
            @logger.error("commands: jobwatch answered #{response.status} #{response.error_text}")
            return 0
          end
          outcomes = []
          Array(response.body.is_a?(Hash) ? response.body["data"] : nil).each do |command|
            outcome = @unacked[command["id"].to_s] || execute(command)
            break if outcome.nil?
            remember(outcome)
            outcomes << outcome
          end
          acknowledge(outcomes)
        end

        # The outcome to acknowledge, or nil when Redis could not be reached (try again later).
        def execute(command)
          id = command["id"].to_s
          jid = command["externalId"].to_s
          problem = jid_problem(command["externalId"]) || queue_problem(command["queue"])
          outcome =
            if problem then Outcome.new(id, "failed", problem)
            else
              case command["type"]
              when "revoke" then revoke(id, jid, command)
              when "retry" then retry_job(id, jid)
              else Outcome.new(id, "failed", "this collector does not know command type #{command["type"].inspect}")
              end
            end
          @logger.info("commands: #{command["type"]} of job #{jid} -> #{outcome.status}#{outcome.reason ? " (#{outcome.reason})" : ""}")
          outcome
        rescue StandardError => e
          if unreachable?(e)
            @logger.warn("commands: #{command["type"]} of job #{jid} not carried out now (Redis: #{e.class}: #{e.message}); will try again")
            return nil
          end
          @logger.error("commands: #{command["type"]} of job #{jid} failed: #{e.class}: #{e.message}")
          Outcome.new(id, "failed", "Sidekiq error: #{e.class}: #{e.message}")
        end

        private

        # redis-rb (Sidekiq 6) and redis-client (Sidekiq 7) name their connection errors differently.
        def unreachable?(error)
          return true if error.is_a?(IOError) || error.is_a?(SystemCallError)
          return true if defined?(::Redis::BaseConnectionError) && error.is_a?(::Redis::BaseConnectionError)
          defined?(::RedisClient::ConnectionError) && error.is_a?(::RedisClient::ConnectionError)
        end

        # Why a command's externalId is no jid the collector can act on, or nil.
        def jid_problem(jid)
          unless jid.is_a?(String) && !jid.empty? && jid.valid_encoding? && !CONTROL.match?(jid) && Limits.utf16_units(jid) <= Limits::FIELDS[:externalId]
            return "not a Sidekiq job id: #{jid.to_s[0, 200].inspect}"
          end
          return nil unless Limits.utf16_units(jid) == Limits::FIELDS[:externalId] && jid.end_with?(Limits::TRUNCATED_MARK)
          "the job's id was cut to #{Limits::FIELDS[:externalId]} characters when it was sent to jobwatch: the collector cannot tell which job it is"
        end

        def queue_problem(queue)
          return nil if queue.nil?
          return nil if queue.is_a?(String) && !queue.empty? && queue.valid_encoding? && !CONTROL.match?(queue) && Limits.utf16_units(queue) <= Limits::FIELDS[:queue]
          "not a Sidekiq queue name: #{queue.to_s[0, 300].inspect}"
        end

        # The queue to look in for the job: the one the collector reported, else the one the
        # command names; nil for none. A queue Sidekiq does not list, or one other than what
        # the collector reported, is a reason to refuse.
        def queue_for(jid, command)
          reported = @reported.queue_of(jid)
          named = command["queue"]
          if reported && named && named != reported
            return [nil, "the command names queue #{named.inspect}, but the collector reported the job in queue #{reported.inspect}: nothing was done"]
          end
          queue = reported || named
          return [nil, nil] if queue.nil?
          unless watched_queue?(queue)
            return [nil, "queue #{queue.inspect} is not one of Sidekiq's queues (in its `queues` set or consumed by a live process): " \
                         "the collector acts only on the queues it watches; nothing was done"]
          end
          [queue, nil]
        end

        # The queues the collector reports: Sidekiq's `queues` set and the queues its live processes consume.
        def watched_queue?(queue)
          return true if ::Sidekiq.redis { |conn| conn.call("SISMEMBER", "queues", queue) }.to_i == 1
          ::Sidekiq::ProcessSet.new.any? { |process| Array(process["queues"]).include?(queue) }
        end

        def revoke(id, jid, command)
          queue_name, refused = queue_for(jid, command)
          return Outcome.new(id, "failed", refused) if refused
          unless @reported.reported?(jid) || sidekiq_has?(jid, queue_name)
            return Outcome.new(id, "failed", "not a job this collector reported, and Sidekiq has no job #{jid.inspect} in its sets, " \
                                             "#{queue_name ? "queue #{queue_name.inspect} " : ""}or running: nothing was done")
          end
          runner = ::Sidekiq.redis { |conn| RevokeFlags.raise_flag(conn, jid) }
          if runner && ::Sidekiq::ProcessSet.new.any? { |process| process["identity"] == runner }
            return Outcome.new(id, "failed", "the job is running in Sidekiq process #{runner}: open-source Sidekiq cannot stop a running job safely, " \
                                             "so this run goes on; it will not be retried")
          end
          sets.each do |where, set|
            entry = LiteralFind.find_job(set, jid)
            next unless entry
            return deleted(id, jid, entry.item, "deleted from Sidekiq's #{where} set") if entry.delete
          end
          if queue_name
            entry = find_in_queue(::Sidekiq::Queue.new(queue_name), jid)
            return deleted(id, jid, entry.item, "deleted from Sidekiq queue #{queue_name}") if entry&.delete
          end
          Outcome.new(id, "done", "not in Sidekiq's queue or sets: if a Sidekiq process has fetched it, it is skipped before it starts; " \
                                  "if it already ran, nothing changed")
        end

        def sets
          [["scheduled", ::Sidekiq::ScheduledSet.new], ["retry", ::Sidekiq::RetrySet.new], ["dead", ::Sidekiq::DeadSet.new]]
        end

        # Whether Sidekiq shows the job: running (its mark), in a set, or in `queue_name`.
        def sidekiq_has?(jid, queue_name)
          return true if ::Sidekiq.redis { |conn| conn.call("EXISTS", RevokeFlags.running_key(jid)) }.to_i.positive?
          return true if sets.any? { |_, set| LiteralFind.find_job(set, jid) }
          !queue_name.nil? && !find_in_queue(::Sidekiq::Queue.new(queue_name), jid).nil?
        end

        def deleted(id, jid, item, how)
          ::Sidekiq.redis { |conn| RevokeFlags.lower_flag(conn, jid) }
          @recorder.record(JobRecord.build("cancelled", item, reason: "revoked from jobwatch: #{how}"))
          Outcome.new(id, "done", nil)
        end

        def find_in_queue(queue, jid)
          scanned = 0
          queue.each do |entry|
            return entry if entry.jid == jid
            break if (scanned += 1) >= QUEUE_SCAN_MAX
          end
          nil
        end

        def retry_job(id, jid)
          [["retry", ::Sidekiq::RetrySet.new], ["dead", ::Sidekiq::DeadSet.new]].each do |where, set|
            entry = LiteralFind.find_job(set, jid)
            next unless entry
            # A revoke of this job earlier must not skip the run asked for now.
            ::Sidekiq.redis { |conn| RevokeFlags.lower_flag(conn, jid) }
            entry.retry
            @logger.debug("commands: job #{jid} moved from the #{where} set to its queue")
            return Outcome.new(id, "done", nil)
          end
          Outcome.new(id, "failed", "not in Sidekiq's retry or dead set (already retried, deleted, or trimmed from the dead set)")
        end

        def acknowledge(outcomes)
          acked = 0
          outcomes.each_slice(ACK_OUTCOMES_PER_REQUEST) do |chunk|
            begin
              reply = @client.post("/api/agent/commands/ack", { "outcomes" => chunk.map(&:to_json_hash) })
            rescue NetworkError => e
              @logger.warn("commands: ack of #{outcomes.size - acked} commands failed (#{e.message}); their outcomes are sent again at the next poll")
              return acked
            end
            if reply.status != 200
              @logger.error("commands: ack refused: #{reply.status} #{reply.error_text}")
              return acked
            end
            chunk.each { |outcome| @unacked.delete(outcome.id) }
            acked += chunk.size
          end
          acked
        end

        def remember(outcome)
          @unacked[outcome.id] = outcome
          @unacked.shift while @unacked.size > UNACKED_OUTCOMES_MAX
        end
      end
    end
  end
end
