# What open-source Sidekiq can do of each control jobwatch may ask for, and why not
# where it cannot. The collector reports it to jobwatch at start and after each outage
# (`PUT /api/agent/capabilities`), so the dashboard shows what Sidekiq cannot do as
# disabled with the reason; a command of such a type that arrives anyway is answered
# `unsupported` with the same reason.
require_relative "../version"
require_relative "http_client"

module Jobwatch
  module Sidekiq
    module Collector
      class Capabilities
        FRAMEWORK = "sidekiq"
        PAUSE_REASON = "pausing a queue is a Sidekiq Pro/Enterprise feature: open-source Sidekiq has no paused queues"
        # Every control of the protocol: nil where Sidekiq does it, else why it cannot.
        UNSUPPORTED = {
          "revoke" => nil,
          "retry" => nil,
          "promote" => nil,
          "delete" => nil,
          "kill" => nil,
          "queue.pause" => PAUSE_REASON,
          "queue.resume" => PAUSE_REASON,
          "queue.clean" => nil,
          "queue.retry_failed" => nil,
          "queue.concurrency" => "open-source Sidekiq has no per-queue concurrency: a process's concurrency is fixed when it starts (-c), " \
                                 "and limits per queue are Sidekiq Enterprise's",
          "task.rate_limit" => "open-source Sidekiq has no rate limits: Sidekiq Enterprise's rate limiters are called from a job's own code",
          "worker.quiet" => nil,
          "worker.stop" => nil,
          "worker.pool" => "a Sidekiq process cannot change its concurrency while it runs: start it again with another -c",
        }.freeze
        # A `queue.clean` of finished jobs: the one mode of a supported type Sidekiq cannot do.
        CLEAN_FINISHED_REASON = "Sidekiq keeps no finished jobs: a job that succeeded leaves Redis at once, and one whose retries ran out " \
                                "waits in the dead set (delete or retry it there; Sidekiq trims the set to its newest 10,000 jobs and 6 months)"
        TYPE_CHARS = 100

        def self.known?(type)
          UNSUPPORTED.key?(type)
        end

        def self.supported?(type)
          known?(type) && UNSUPPORTED[type].nil?
        end

        # Why the collector will not carry out `type`, or nil when it does.
        def self.refusal(type)
          return UNSUPPORTED[type] if known?(type)
          "this agent version does not know '#{type.to_s[0, TYPE_CHARS]}'"
        end

        def self.body
          controls = UNSUPPORTED.to_h { |type, reason| [type, reason ? { "supported" => false, "reason" => reason } : { "supported" => true }] }
          { "framework" => FRAMEWORK, "agentVersion" => VERSION, "controls" => controls }
        end

        def initialize(client:, logger:)
          @client = client
          @logger = logger
          @due = true
        end

        # Sent at the next step: jobwatch was unreachable, and may have restarted without them.
        def due!
          @due = true
        end

        # Sends the capabilities when due. Raises NetworkError when jobwatch cannot be reached
        # (they stay due).
        def report
          return unless @due
          reply = @client.put("/api/agent/capabilities", Capabilities.body)
          @due = false
          case reply.status
          when 200..299 then @logger.info("capabilities reported to jobwatch: #{UNSUPPORTED.count { |_, r| r.nil? }} controls supported, " \
                                          "#{UNSUPPORTED.count { |_, r| r }} answered unsupported")
          when 404 then @logger.warn("jobwatch does not take an agent's capabilities (404: a version before job-system controls); " \
                                     "each command is still answered, unsupported ones with the reason")
          else @logger.error("capabilities refused by jobwatch: #{reply.status} #{reply.error_text}; sent again after its next outage")
          end
        end
      end
    end
  end
end
