# What became of one command, as the collector acknowledges it: `done`, `failed` (the
# reason says why; "not found" when Sidekiq no longer has what it names) or
# `unsupported` (the reason says why Sidekiq cannot). `details` is a small object of
# counts (`{removed: 1204}`). WAITING is no outcome: the command was carried out and the
# collector waits to see Sidekiq act on it (a process taking its signal), so it is not
# acknowledged yet.
module Jobwatch
  module Sidekiq
    module Collector
      CommandOutcome = Struct.new(:id, :status, :reason, :details) do
        def self.done(id, reason = nil, details: nil)
          new(id, "done", reason, details)
        end

        def self.failed(id, reason)
          new(id, "failed", reason, nil)
        end

        def self.unsupported(id, reason)
          new(id, "unsupported", reason, nil)
        end

        def to_json_hash
          body = { "id" => id, "status" => status }
          body["reason"] = reason[0, CommandOutcome::REASON_CHARS] if reason
          body["details"] = details if details
          body
        end
      end

      # The service takes reasons of at most 1,000 characters.
      CommandOutcome::REASON_CHARS = 1000
      WAITING = :waiting
    end
  end
end
