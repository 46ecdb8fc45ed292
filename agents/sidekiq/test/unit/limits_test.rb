# The collector's limits are agents/ingest-limits.json's (a bun test holds that file against
# the service), and its bounding rule passes the cases every agent runs (agents/bounding-cases.json).
require_relative "test_helper"
require "json"
require "jobwatch/sidekiq/collector/bound_json"
require "jobwatch/sidekiq/collector/normalize"
require "jobwatch/sidekiq/collector/deliverer"

class LimitsTest < Minitest::Test
  C = Jobwatch::Sidekiq::Collector
  AGENTS = File.expand_path("../../..", __dir__)
  FIXTURE = JSON.parse(File.read(File.join(AGENTS, "ingest-limits.json")))
  CASES = JSON.parse(File.read(File.join(AGENTS, "bounding-cases.json")))

  def test_the_field_and_request_limits_are_the_fixtures
    fields = C::Limits::FIELDS.transform_keys { |key| "#{key}Chars" }.merge("queuesPerWorkerMax" => C::Limits::QUEUES_PER_WORKER_MAX)
    assert_equal FIXTURE["fields"].sort.to_h, fields.sort.to_h
    assert_equal FIXTURE["freeFormObject"]["forbiddenKeys"], C::Limits::FORBIDDEN_KEYS
    assert_equal FIXTURE["request"], { "eventsMax" => C::Limits::INGEST_EVENTS_MAX, "bodyBytesMax" => C::Limits::INGEST_BODY_BYTES_MAX }
    assert_equal [C::Limits::INGEST_EVENTS_MAX, C::Limits::INGEST_BODY_BYTES_MAX], [C::Deliverer::EVENTS_PER_REQUEST_MAX, C::Deliverer::BODY_BYTES_MAX]
  end

  def test_the_agent_bounds_are_the_fixtures
    assert_equal FIXTURE["agentBounds"], C::Limits::AGENT_BOUNDS.merge("truncatedMark" => C::Limits::TRUNCATED_MARK)
    assert_equal FIXTURE["payloadBounds"].slice(*C::Limits::PAYLOAD_BOUNDS.keys), C::Limits::PAYLOAD_BOUNDS
    assert_equal [FIXTURE["jobPayload"]["redactKeys"], FIXTURE["jobPayload"]["redacted"]], [C::Redaction::DEFAULT_REDACT_KEYS, C::Redaction::REDACTED]
  end

  CASES["payloadCases"].each_with_index do |each, index|
    define_method("test_shared_payload_bounding_case_#{index}_#{each["name"].gsub(/\W+/, "_")}") do
      assert_equal each["expected"], C::BoundJson.bound_payload(each["input"], CASES["payloadBounds"].merge(each["bounds"] || {}), C::Redaction::Redactor.new)
    end
  end

  CASES["cases"].each_with_index do |each, index|
    define_method("test_shared_bounding_case_#{index}_#{each["name"].gsub(/\W+/, "_")}") do
      assert_equal each["expected"], C::BoundJson.bound(each["input"], CASES["bounds"].merge(each["bounds"] || {}))
    end
  end

  def test_the_shared_cut_cases
    CASES["cutMarked"].each { |each| assert_equal each["expected"], C::Limits.cut_marked(each["text"], each["limit"]), each["text"] }
  end

  def depth(value, level = 1)
    case value
    when Hash then ([level] + value.values.map { |item| depth(item, level + 1) }).max
    when Array then ([level] + value.map { |item| depth(item, level + 1) }).max
    else 0
    end
  end

  def test_the_worst_an_app_can_put_in_a_value_is_bounded_within_the_services_limits
    nasty = ("\u0000\"\\\u2028😀" * 2000).b + "\xff".b # not valid UTF-8: scrubbed
    deep = "bottom"
    500.times { |level| deep = level.even? ? [deep] : { "k#{level}" => deep } }
    wide = { "list" => [nasty] * 300 }
    300.times { |index| wide["#{nasty[0, 400]}#{index}"] = [nasty] * 3 }
    [wide, { "deep" => deep }, { "__proto__" => 1, "list" => (1..100_000).to_a, sym: :value, "nan" => Float::NAN }].each do |value|
      bounded = C::BoundJson.bound(value)
      text = JSON.generate(bounded)
      assert_operator text.bytesize, :<=, FIXTURE["agentBounds"]["bytesMax"]
      assert_operator depth(bounded), :<=, FIXTURE["freeFormObject"]["depthMax"]
      assert_empty FIXTURE["freeFormObject"]["forbiddenKeys"] & JSON.parse(text).keys
    end
  end

  def test_a_retry_option_of_40_nested_arrays_is_bounded_and_fields_are_cut_in_utf16_units_with_a_mark
    nested = 1
    40.times { nested = [nested] }
    job = { "jid" => "j1", "class" => "😀" * 600, "queue" => "default", "retry" => nested }
    event = C::Normalize.job_event("k" => "enqueued", "t" => 1_800_000_000.0, "job" => job)
    kept = event[:job][:extensions]["retry"]
    7.times { kept = kept[0] } # extensions is level 1, retry level 2: six more arrays, then the mark
    assert_equal "…[truncated: deeper than 8 levels]", kept
    assert_equal "😀" * 506 + "…[truncated]", event[:job][:name] # 1,012 units of emoji and the 12-unit mark
    assert_equal "h" * 243 + "…[truncated]", C::Normalize.worker_event({ "identity" => "x", "hostname" => "h" * 300 }, "online", 1.0)[:worker][:hostname]
  end

  def test_strings_that_are_not_valid_utf8_are_scrubbed_not_fatal
    assert_equal "a\uFFFDb", C::Limits.cut_marked("a\xffb".b, 10)
    assert_equal "caf\u00e9", C::Limits.cut_marked("caf\xe9".force_encoding(Encoding::ISO_8859_1), 10)
  end
end
