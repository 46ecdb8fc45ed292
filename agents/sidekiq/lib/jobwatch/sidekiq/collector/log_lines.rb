# Log messages carry names from Sidekiq and jobwatch (queue names, job ids, errors): a
# newline, a NUL or an escape sequence in one must not end the line and forge the next.
# So every control character of a message is written escaped.
module Jobwatch
  module Sidekiq
    module Collector
      module LogLines
        # C0 and C1 controls, DEL, and the two Unicode line separators
        CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.freeze
        SHORT = { "\n" => "\\n", "\r" => "\\r", "\t" => "\\t" }.freeze

        module_function

        # `text` with every control character written as an escape (`\n`, `\x1b`, `\u2028`).
        def printable(text)
          text = text.valid_encoding? ? text : text.scrub("\uFFFD")
          text.gsub(CONTROL) { |char| SHORT[char] || (char.ord < 0x100 ? format("\\x%02x", char.ord) : format("\\u%04x", char.ord)) }
        end
      end
    end
  end
end
