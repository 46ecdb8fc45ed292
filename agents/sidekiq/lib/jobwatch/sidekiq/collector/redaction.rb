# Which keys of a job's arguments hold secrets: their values are masked before anything
# leaves the app's network (BoundJson.bound_payload applies it while it bounds). The rule is
# jobwatch's own, which masks again on ingest: a key matches when its letters and digits,
# lower-cased, contain a pattern's (`apiKey`, `X-Api-Key` and `API_KEY` all match
# `api_key`); a pattern of three characters or fewer must be a whole word of the key
# instead (`ssn` matches `user_ssn` and `ssnLast4`, not `className`), words split at `_`,
# `-`, `.`, spaces and lower-to-upper case changes. The same cases
# (agents/redaction-cases.json) run against the three agents and the service.
module Jobwatch
  module Sidekiq
    module Collector
      module Redaction
        DEFAULT_REDACT_KEYS = %w[password passwd secret token api_key apikey authorization cookie credit_card card_number ssn].freeze
        # What a masked value becomes.
        REDACTED = "[redacted]".freeze
        # Patterns this short match whole words only: as substrings they hit ordinary names.
        WORD_PATTERN_CHARS_MAX = 3
        # Distinct keys whose verdict is remembered: an app inventing keys cannot grow it past this.
        VERDICTS_MAX = 10_000

        module_function

        def compact(text)
          text.downcase.gsub(/[^a-z0-9]/, "")
        end

        def words_of(key)
          key.gsub(/([a-z0-9])([A-Z])/, '\1 \2').downcase.split(/[^a-z0-9]+/).reject(&:empty?)
        end

        class Redactor
          attr_reader :patterns

          def initialize(patterns = DEFAULT_REDACT_KEYS)
            @patterns = patterns.dup.freeze
            compacted = patterns.map { |pattern| Redaction.compact(pattern) }.reject(&:empty?)
            @substrings = compacted.select { |pattern| pattern.length > WORD_PATTERN_CHARS_MAX }
            @words = compacted.select { |pattern| pattern.length <= WORD_PATTERN_CHARS_MAX }.to_h { |word| [word, true] }
            @verdicts = {}
            @lock = Mutex.new # one redactor serves every thread of a Sidekiq process
          end

          # Whether the value under `key` is masked.
          def matches?(key)
            key = key.to_s
            verdict = @verdicts[key]
            return verdict unless verdict.nil?
            letters = Redaction.compact(key)
            verdict = @substrings.any? { |pattern| letters.include?(pattern) } || (!@words.empty? && Redaction.words_of(key).any? { |word| @words.key?(word) })
            @lock.synchronize do
              @verdicts.clear if @verdicts.size >= VERDICTS_MAX
              @verdicts[key] = verdict
            end
            verdict
          end
        end

        # Job names whose arguments are never sent (`--omit-args`): exact names, or with `*`
        # standing for any run of characters (`Billing::*`).
        class OmittedNames
          attr_reader :names

          def initialize(names = [])
            @names = names.dup.freeze
            @exact = names.reject { |name| name.include?("*") }.to_h { |name| [name, true] }
            globs = names.select { |name| name.include?("*") }
            @glob = globs.empty? ? nil : Regexp.new("\\A(?:#{globs.map { |glob| glob.split("*", -1).map { |part| Regexp.escape(part) }.join(".*") }.join("|")})\\z", Regexp::MULTILINE)
          end

          def include?(name)
            name.is_a?(String) && (@exact.key?(name) || (!@glob.nil? && @glob.match?(name)))
          end
        end
      end
    end
  end
end
