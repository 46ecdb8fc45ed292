# The integration and the collector mask exactly the keys agents/redaction-cases.json says, as
# the other agents and the service do (a bun test runs the same cases through the service's
# ingest), and leave out the arguments of the jobs --omit-args names.
require_relative "test_helper"
require "json"
require "jobwatch/sidekiq/job_arguments"

class RedactionTest < Minitest::Test
  C = Jobwatch::Sidekiq::Collector
  CASES = JSON.parse(File.read(File.expand_path("../../../redaction-cases.json", __dir__)))
  VALUE_CASES = CASES["values"].map { |each| each.merge("patterns" => CASES["patterns"]) } + CASES["customPatterns"]

  CASES["keys"].each_with_index do |each, index|
    define_method("test_key_#{index}_#{each["key"].gsub(/\W+/, "_")}_is_#{each["masked"] ? "masked" : "kept"}") do
      assert_equal each["masked"], C::Redaction::Redactor.new(CASES["patterns"]).matches?(each["key"])
    end
  end

  VALUE_CASES.each_with_index do |each, index|
    define_method("test_value_#{index}_#{each["name"].gsub(/\W+/, "_")}") do
      assert_equal each["expected"], C::BoundJson.bound_payload(each["input"], {}, C::Redaction::Redactor.new(each["patterns"]))
    end
  end

  def test_omitted_names_are_exact_or_globs
    omitted = C::Redaction::OmittedNames.new(["LoginJob", "Billing::*"])
    assert omitted.include?("LoginJob") && omitted.include?("Billing::Charge") && omitted.include?("Billing::")
    refute omitted.include?("LoginJob2") || omitted.include?("Billingx") || omitted.include?("loginjob") || omitted.include?(nil)
    assert C::Redaction::OmittedNames.new(["*"]).include?("Anything")
  end
end
