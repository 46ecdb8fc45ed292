# What a command from jobwatch may name. Anyone holding the connection's API key can
# send jobwatch a job, worker or queue under any name, so each jid, queue name and
# process identity is checked here before any Redis key is built from it: a string, valid
# UTF-8, no control characters, within jobwatch's own length for that field. Each check
# answers why it refuses (the reason jobwatch shows), or nil.
require_relative "limits"

module Jobwatch
  module Sidekiq
    module Collector
      module CommandInput
        CONTROL = /[\u0000-\u001f\u007f-\u009f]/.freeze

        module_function

        def jid_problem(jid)
          return "not a Sidekiq job id: #{jid.to_s[0, 200].inspect}" unless plain_text?(jid, Limits::FIELDS[:externalId])
          return nil unless cut_by_jobwatch?(jid, Limits::FIELDS[:externalId])
          "the job's id was cut to #{Limits::FIELDS[:externalId]} characters when it was sent to jobwatch: the collector cannot tell which job it is"
        end

        # A queue a job command may name: absent, or a name.
        def optional_queue_problem(queue)
          queue.nil? ? nil : queue_problem(queue)
        end

        def queue_problem(queue)
          return nil if plain_text?(queue, Limits::FIELDS[:queue])
          "not a Sidekiq queue name: #{queue.to_s[0, 300].inspect}"
        end

        # A worker's externalId: the Sidekiq process identity the collector reported.
        def process_problem(identity)
          return "not a Sidekiq process identity: #{identity.to_s[0, 200].inspect}" unless plain_text?(identity, Limits::FIELDS[:workerId])
          return nil unless cut_by_jobwatch?(identity, Limits::FIELDS[:workerId])
          "the process identity was cut to #{Limits::FIELDS[:workerId]} characters when it was sent to jobwatch: the collector cannot tell which process it is"
        end

        def plain_text?(value, max_units)
          value.is_a?(String) && !value.empty? && value.valid_encoding? && !CONTROL.match?(value) && Limits.utf16_units(value) <= max_units
        end

        # A value the collector cut (with the mark) when it sent it names nothing whole.
        def cut_by_jobwatch?(value, max_units)
          Limits.utf16_units(value) == max_units && value.end_with?(Limits::TRUNCATED_MARK)
        end
      end
    end
  end
end
