# Sidekiq's records -> jobwatch ingest events (without connectionId, added when sent).
#
# Mapping: enqueued and requeued -> queued, scheduled -> scheduled (its time in
# extensions.eta, which jobwatch shows as scheduledFor), started -> active, succeeded ->
# completed, retrying -> retrying with its error, dead (retries exhausted) -> failed
# with its error, cancelled (revoked) -> cancelled. `jid` is the externalId, the wrapped
# ActiveJob class (else the class) the name, `retry` the maxRetries; the attempt comes
# from retry_count. Native details go to extensions, bounded like every value copied
# from Sidekiq (BoundJson); the contract's strings are cut with a mark (Limits). The job's
# arguments, from a record or a set's entry, go to `args`, masked and bounded again by the
# collector's own settings (JobArguments; a job --omit-args names goes without them).
require_relative "../times"
require_relative "../compat"
require_relative "../job_arguments"
require_relative "limits"
require_relative "bound_json"

module Jobwatch
  module Sidekiq
    module Collector
      module Normalize
        FRAMEWORK = "sidekiq"
        STATES = {
          "enqueued" => "queued", "requeued" => "queued", "scheduled" => "scheduled", "started" => "active",
          "succeeded" => "completed", "retrying" => "retrying", "dead" => "failed", "cancelled" => "cancelled",
        }.freeze
        FINISHED = %w[succeeded dead cancelled].freeze
        UNKNOWN_NAME = "unknown"
        TAGS_MAX = 50

        class InvalidRecord < StandardError; end

        module_function

        # One stream record (as the integration wrote it) -> one job_state_change event.
        def job_event(record)
          kind = record["k"]
          state = STATES[kind] or raise InvalidRecord, "unknown kind #{kind.inspect}"
          job = record["job"]
          raise InvalidRecord, "no job" unless job.is_a?(Hash) && job["jid"].is_a?(String) && !job["jid"].empty?
          at_s = Times.epoch_s(record["t"]) or raise InvalidRecord, "no time"
          # a record's arguments are its own field, masked by the integration already; its job holds none
          payload = job_payload(job, state, attempt: record["attempt"], max_retries: record["max"], with_args: false)
          if record.key?("args")
            args = Jobwatch::Sidekiq.arguments.recorded(record["args"], payload[:name])
            payload[:args] = args unless args.nil?
          end
          payload[:workerId] = cut(record["wid"], :workerId) if record["wid"].is_a?(String)
          started = Times.epoch_s(record["started"])
          payload[:startedAt] = Times.iso(started) if started
          payload[:startedAt] = Times.iso(at_s) if kind == "started"
          payload[:completedAt] = Times.iso(at_s) if FINISHED.include?(kind) && (started || kind != "cancelled")
          if record["error"].is_a?(String)
            payload[:error] = cut(record["error"], :error)
            payload[:stacktrace] = cut(record["backtrace"], :stacktrace) if record["backtrace"].is_a?(String)
          end
          payload[:extensions] = BoundJson.bound(payload[:extensions].merge("reason" => record["reason"])) if record["reason"].is_a?(String)
          event(at_s, payload)
        end

        # An entry of Sidekiq's scheduled, retry or dead set -> the job's state there,
        # at the time Sidekiq put it there.
        def set_entry_event(set, item, score)
          score_s = Times.epoch_s(score)
          case set
          when "scheduled"
            at_s = Times.epoch_s(item["created_at"]) || Times.now_s
            payload = job_payload(item, "scheduled")
            payload[:extensions] = payload[:extensions].merge("eta" => Times.iso(score_s)) if score_s
          when "retry"
            at_s = Times.epoch_s(item["retried_at"]) || Times.epoch_s(item["failed_at"]) || Times.now_s
            payload = job_payload(item, "retrying", attempt: failed_attempt(item))
            payload[:extensions] = payload[:extensions].merge("retryAt" => Times.iso(score_s)) if score_s
            add_native_error(payload, item)
          when "dead"
            at_s = score_s || Times.now_s
            payload = job_payload(item, "failed", attempt: failed_attempt(item))
            payload[:completedAt] = Times.iso(at_s)
            add_native_error(payload, item)
          else
            raise ArgumentError, "unknown set #{set.inspect}"
          end
          event(at_s, payload)
        end

        # A job that was running in a Sidekiq process that stopped beating: open-source
        # Sidekiq does not run it again. Timed when it was last seen running, so a
        # completion the collector did not see yet still wins.
        def lost_job_event(item, process_id, seen_s)
          payload = job_payload(item, "failed")
          payload[:workerId] = cut(process_id, :workerId)
          payload[:error] = "lost: Sidekiq process #{process_id} stopped (killed or crashed) while this job ran; " \
                            "open-source Sidekiq does not run it again"
          payload[:completedAt] = Times.iso(seen_s)
          event(seen_s, payload)
        end

        def worker_event(process, state, at_s)
          payload = {
            externalId: cut(process["identity"].to_s, :externalId),
            hostname: cut(process["hostname"].to_s, :hostname),
            state: state,
            queues: Array(process["queues"]).first(Limits::QUEUES_PER_WORKER_MAX).map { |q| cut(q.to_s, :queue) }.uniq,
            metadata: BoundJson.bound(worker_metadata(process)),
          }
          payload[:pid] = process["pid"] if process["pid"].is_a?(Integer)
          payload[:concurrency] = process["concurrency"] if process["concurrency"].is_a?(Integer)
          payload[:activeJobs] = process["busy"].to_i if state != "offline"
          { type: "worker_state_change", timestamp: Times.iso(at_s), framework: FRAMEWORK, worker: payload }
        end

        # `latency_s`: Sidekiq's queue latency (seconds the oldest pending job has waited),
        # sent as extensions.latencyMs; `paused`: Sidekiq's `Queue#paused?` (always false in
        # open-source Sidekiq, the queue's state with Sidekiq Pro), sent as extensions.paused.
        # nil (not read) leaves each out.
        def queue_event(name, depth, consumers, at_s, latency_s: nil, paused: nil)
          payload = { name: cut(name.to_s, :queue), depth: depth.to_i, consumers: consumers.to_i }
          extensions = {}
          extensions["latencyMs"] = [(latency_s * 1000).round, 0].max if latency_s.is_a?(Numeric) && latency_s.finite?
          extensions["paused"] = paused if paused == true || paused == false
          payload[:extensions] = extensions unless extensions.empty?
          { type: "queue_snapshot", timestamp: Times.iso(at_s), framework: FRAMEWORK, queue: payload }
        end

        # `with_args`: the job hash is Sidekiq's whole job (a set's or a process's entry), its arguments included.
        def job_payload(job, state, attempt: nil, max_retries: nil, with_args: true)
          wrapped = job["wrapped"]
          name = (wrapped.is_a?(String) && !wrapped.empty? ? wrapped : job["class"]).to_s
          name = UNKNOWN_NAME if name.empty?
          payload = {
            externalId: cut(job["jid"].to_s, :externalId),
            name: cut(name, :name),
            state: state,
            attempt: attempt.is_a?(Integer) && attempt >= 1 ? attempt : attempt_at_start(job),
            maxRetries: max_retries.is_a?(Integer) && max_retries >= 0 ? max_retries : Compat.max_retries(job["retry"]),
            extensions: BoundJson.bound(extensions(job)),
          }
          payload[:queue] = cut(job["queue"], :queue) if job["queue"].is_a?(String) && !job["queue"].empty?
          args = with_args ? Jobwatch::Sidekiq.arguments.of(job) : nil
          payload[:args] = args unless args.nil?
          created = Times.epoch_s(job["created_at"])
          payload[:createdAt] = Times.iso(created) if created
          payload
        end

        def extensions(job)
          ext = { "jid" => job["jid"] }
          ext["class"] = job["class"].to_s if job["wrapped"]
          ext["retry"] = job["retry"] unless job["retry"].nil?
          ext["retryCount"] = job["retry_count"] if job["retry_count"].is_a?(Integer)
          enqueued = Times.epoch_s(job["enqueued_at"])
          ext["enqueuedAt"] = Times.iso(enqueued) if enqueued
          at = Times.epoch_s(job["at"])
          ext["eta"] = Times.iso(at) if at
          ext["errorClass"] = job["error_class"].to_s if job["error_class"]
          ext["bid"] = job["bid"].to_s if job["bid"]
          ext["sidekiqTags"] = job["tags"].first(TAGS_MAX).map(&:to_s) if job["tags"].is_a?(Array)
          ext
        end

        # Sidekiq leaves retry_count out on the first run and writes 0 when it fails.
        def attempt_at_start(job)
          job["retry_count"].is_a?(Integer) ? job["retry_count"] + 2 : 1
        end

        # In the retry and dead sets retry_count already counts the failed run.
        def failed_attempt(job)
          job["retry_count"].is_a?(Integer) ? job["retry_count"] + 1 : 1
        end

        def add_native_error(payload, item)
          return unless item["error_message"] || item["error_class"]
          payload[:error] = cut("#{item["error_class"]}: #{item["error_message"]}", :error)
          backtrace = item["error_backtrace"]
          payload[:stacktrace] = cut(backtrace.join("\n"), :stacktrace) if backtrace.is_a?(Array)
        end

        def worker_metadata(process)
          meta = {}
          %w[tag version labels started_at quiet rss].each { |key| meta[key] = process[key] unless process[key].nil? || process[key] == "" }
          beat = Times.epoch_s(process["beat"])
          meta["lastBeat"] = Times.iso(beat) if beat
          started = Times.epoch_s(process["started_at"])
          meta["started_at"] = Times.iso(started) if started
          meta
        end

        def event(at_s, payload)
          { type: "job_state_change", timestamp: Times.iso(at_s), framework: FRAMEWORK, job: payload }
        end

        def cut(text, field)
          Limits.field(text, field)
        end
      end
    end
  end
end
