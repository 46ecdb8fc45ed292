# A revoke for a job that Sidekiq has already fetched (or is running) cannot delete it
# from a queue. The collector leaves a flag in Redis instead; the server middleware
# claims it (DEL returns 1) just before the job would start and skips the job. Flags
# expire, so one for a job that never comes back costs nothing for long.
module Jobwatch
  module Sidekiq
    module RevokeFlags
      PREFIX = "jobwatch:sidekiq:revoked:"
      TTL_S = 24 * 3600

      module_function

      def key(jid)
        "#{PREFIX}#{jid}"
      end

      def raise_flag(conn, jid, ttl_s: TTL_S)
        conn.call("SET", key(jid), "1", "EX", ttl_s.to_s)
      end

      def lower_flag(conn, jid)
        conn.call("DEL", key(jid))
      end

      # True when a flag was waiting for this job (and is now taken down).
      def claim(conn, jid)
        conn.call("DEL", key(jid)).to_i == 1
      end
    end
  end
end
