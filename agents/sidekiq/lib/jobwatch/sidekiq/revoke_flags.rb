# How a revoke reaches a job Sidekiq has already taken from its queue. Two keys per job
# in Sidekiq's Redis: a revoke flag the collector raises, and a running mark the server
# middleware holds while the job runs. The middleware takes the flag down and raises
# the mark in one transaction before the job starts; the collector raises the flag and
# reads the mark in one transaction. So exactly one of two things is true: the flag
# came first and the job is skipped before it starts, or the mark came first and the
# collector knows the job is running (it cannot be stopped safely, and the flag still
# up skips its retry). Both keys expire, so a crashed process leaves nothing for long.
module Jobwatch
  module Sidekiq
    module RevokeFlags
      FLAG_PREFIX = "jobwatch:sidekiq:revoked:"
      RUNNING_PREFIX = "jobwatch:sidekiq:running:"
      TTL_S = 24 * 3600

      module_function

      def flag_key(jid)
        "#{FLAG_PREFIX}#{jid}"
      end

      def running_key(jid)
        "#{RUNNING_PREFIX}#{jid}"
      end

      # Collector: raises the flag; returns the identity of the process running the job, or nil.
      def raise_flag(conn, jid, ttl_s: TTL_S)
        results = conn.multi do |transaction|
          transaction.call("SET", flag_key(jid), "1", "EX", ttl_s.to_s)
          transaction.call("GET", running_key(jid))
        end
        results[1]
      end

      def lower_flag(conn, jid)
        conn.call("DEL", flag_key(jid))
      end

      # Middleware, before the job starts: true when it was revoked (the flag is taken
      # down); otherwise the job is marked running by `identity`.
      def start(conn, jid, identity, ttl_s: TTL_S)
        results = conn.multi do |transaction|
          transaction.call("DEL", flag_key(jid))
          transaction.call("SET", running_key(jid), identity, "EX", ttl_s.to_s)
        end
        return false unless results[0].to_i == 1
        conn.call("DEL", running_key(jid))
        true
      end

      def finish(conn, jid)
        conn.call("DEL", running_key(jid))
      end
    end
  end
end
