# The gem as `gem build jobwatch-sidekiq.gemspec` makes it: every file of lib/ and the
# collector's command are in it, its version is the one the collector logs, and what it
# declares it needs is what the code requires.
require_relative "test_helper"
require "rubygems"
require "jobwatch/sidekiq/version"

class GemspecTest < Minitest::Test
  ROOT = File.expand_path("../..", __dir__)

  def spec
    @spec ||= Dir.chdir(ROOT) { Gem::Specification.load("jobwatch-sidekiq.gemspec") }
  end

  def test_the_gemspec_loads_and_is_valid
    refute_nil spec
    Dir.chdir(ROOT) { spec.validate(false) }
    assert_equal Jobwatch::Sidekiq::VERSION, spec.version.to_s
  end

  def test_every_library_file_and_the_collector_command_are_packaged
    packaged = spec.files.sort
    Dir.chdir(ROOT) do
      assert_equal Dir["lib/**/*.rb"].sort, packaged.grep(%r{\Alib/})
    end
    assert_includes packaged, "bin/jobwatch-sidekiq"
    assert_equal ["jobwatch-sidekiq"], spec.executables
    assert File.executable?(File.join(ROOT, "bin", "jobwatch-sidekiq")), "bin/jobwatch-sidekiq must be executable"
    refute packaged.any? { |file| file.start_with?("test/") }, "tests are not shipped"
  end

  def test_it_needs_sidekiq_6_4_or_later_and_nothing_else
    assert_equal ["sidekiq"], spec.runtime_dependencies.map(&:name)
    requirement = spec.runtime_dependencies.first.requirement
    assert requirement.satisfied_by?(Gem::Version.new("6.4.1"))
    refute requirement.satisfied_by?(Gem::Version.new("6.3.0"))
  end
end
