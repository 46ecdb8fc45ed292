# jobwatch's commands, fetched, carried out in Sidekiq and acknowledged with an outcome:
# on a job (JobControls), a queue (QueueControls) or a process (ProcessControls). A type
# open-source Sidekiq cannot do, or one this version does not know, is answered
# `unsupported` with the reason (Capabilities), which the collector also reports to
# jobwatch at start and after each outage.
#
# A command whose ack was lost is not carried out twice: its outcome is remembered and
# sent again. While Redis cannot be reached a command is left unacknowledged (with the
# ones behind it, to keep their order) and comes back at the next poll. A process
# signalled to quiet or stop is watched at each poll until it acts (its command stays
# unacknowledged meanwhile, without holding up the others).
#
# Every id and name in a command is checked before any Redis key is built from it
# (CommandInput), and the collector acts only on queues Sidekiq lists and on jobs it
# reported or Sidekiq shows (SidekiqScope).
require_relative "http_client"
require_relative "capabilities"
require_relative "command_outcome"
require_relative "reported_jobs"
require_relative "sidekiq_scope"
require_relative "job_controls"
require_relative "queue_controls"
require_relative "process_controls"

module Jobwatch
  module Sidekiq
    module Collector
      class Commands
        Outcome = CommandOutcome
        COMMANDS_PER_POLL = 100
        # The service caps an ack body at 128 KiB: 20 outcomes with 1,000-character reasons always fit.
        ACK_OUTCOMES_PER_REQUEST = 20
        UNACKED_OUTCOMES_MAX = 10_000

        # reported: the jobs the collector reported (ReportedJobs)
        def initialize(client:, logger:, recorder:, reported: ReportedJobs.new, processes: ProcessControls.new(logger: logger))
          @client = client
          @logger = logger
          scope = SidekiqScope.new(reported)
          @jobs = JobControls.new(recorder: recorder, scope: scope)
          @queues = QueueControls.new(recorder: recorder, scope: scope, logger: logger)
          @processes = processes
          @capabilities = Capabilities.new(client: client, logger: logger)
          @unreachable = false
          @unacked = {}
        end

        # Fetches pending commands, carries them out, acknowledges; returns how many were acknowledged.
        def step
          response = begin
            @capabilities.report
            @client.get("/api/agent/commands?limit=#{COMMANDS_PER_POLL}")
          rescue NetworkError => e
            @logger.warn("commands: jobwatch unreachable (#{e.message}); polling on") unless @unreachable
            @unreachable = true
            @capabilities.due!
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
            next unless command.is_a?(Hash)
            outcome = @unacked[command["id"].to_s] || execute(command)
            break if outcome.nil?
            next if outcome == WAITING
            remember(outcome)
            outcomes << outcome
          end
          acknowledge(outcomes)
        end

        # The outcome to acknowledge, WAITING while a process has not acted on its signal yet,
        # or nil when Redis could not be reached (try again later).
        def execute(command)
          id = command["id"].to_s
          type = command["type"]
          outcome = dispatch(id, type, command)
          log(command, outcome)
          outcome
        rescue StandardError => e
          if unreachable?(e)
            @logger.warn("commands: #{describe(command)} not carried out now (Redis: #{e.class}: #{e.message}); will try again")
            return nil
          end
          @logger.error("commands: #{describe(command)} failed: #{e.class}: #{e.message}")
          Outcome.failed(id, "Sidekiq error: #{e.class}: #{e.message}")
        end

        private

        def dispatch(id, type, command)
          return Outcome.unsupported(id, Capabilities.refusal(type)) unless Capabilities.supported?(type)
          if JobControls::TYPES.include?(type) then @jobs.carry_out(id, type, command)
          elsif QueueControls::TYPES.include?(type) then @queues.carry_out(id, type, command)
          elsif ProcessControls::TYPES.include?(type) then @processes.carry_out(id, type, command)
          else raise ArgumentError, "no control carries out #{type.inspect}"
          end
        end

        def log(command, outcome)
          return if outcome == WAITING
          details = outcome.details ? " #{JSON.generate(outcome.details)}" : ""
          @logger.info("commands: #{describe(command)} -> #{outcome.status}#{outcome.reason ? " (#{outcome.reason})" : ""}#{details}")
        end

        # "revoke of job <jid>", "queue.clean of queue <name>", "worker.stop of process <identity>"
        def describe(command)
          type = command["type"].to_s[0, Capabilities::TYPE_CHARS]
          if QueueControls::TYPES.include?(type) then "#{type} of queue #{command["queue"].to_s[0, 300]}"
          elsif ProcessControls::TYPES.include?(type) then "#{type} of process #{command["workerId"].to_s[0, 600]}"
          elsif JobControls::TYPES.include?(type) then "#{type} of job #{command["externalId"].to_s[0, 600]}"
          else "command #{type}"
          end
        end

        # redis-rb (Sidekiq 6) and redis-client (Sidekiq 7) name their connection errors differently.
        def unreachable?(error)
          return true if error.is_a?(IOError) || error.is_a?(SystemCallError)
          return true if defined?(::Redis::BaseConnectionError) && error.is_a?(::Redis::BaseConnectionError)
          defined?(::RedisClient::ConnectionError) && error.is_a?(::RedisClient::ConnectionError)
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
