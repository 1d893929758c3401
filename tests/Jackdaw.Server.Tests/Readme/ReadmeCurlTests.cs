using System.Text;
using System.Text.RegularExpressions;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Readme;

/// <summary>
/// Every curl example of README.md, run in order as a newcomer pastes them (from the repository's
/// folder, with bash) against the real server on a fresh data folder, the port the only change;
/// each answer is checked against the comment beside its command (<see cref="ReadmePattern"/>).
/// The examples of the Security section need a secured server and the certificates its commands
/// make: <see cref="ReadmeSecurityTests"/> runs them.
/// </summary>
public sealed partial class ReadmeCurlTests
{
    private const string StatusMarker = "@@readme-status ";

    [Fact]
    public async Task EveryCurlExampleAnswersAsItsCommentSays()
    {
        var commands = CurlCommands();
        Assert.True(commands.Count >= 30, $"README.md has {commands.Count} curl commands; the parser lost some.");

        using var data = new TempFolder("jackdaw-readme");
        using var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
        var address = await server.WaitForAddressAsync(TimeSpan.FromSeconds(60));
        var origin = $"127.0.0.1:{address.Port}";

        var values = new Dictionary<string, string>();
        var failures = new List<string>();
        foreach (var command in commands)
        {
            string text;
            try
            {
                text = ReadmePattern.Fill(command.Text, values).Replace("127.0.0.1:8080", origin, StringComparison.Ordinal);
            }
            catch (InvalidOperationException e)
            {
                failures.Add($"README.md line {command.Line}: {e.Message}\n  {command.Text}");
                continue;
            }
            var output = await RunAsync(text);
            if (Check(command, output, values) is { } problem)
            {
                failures.Add($"README.md line {command.Line}: {problem}\n  command: {command.Text}\n  output:  {output.Replace(origin, "127.0.0.1:8080", StringComparison.Ordinal).Trim()}");
            }
        }
        Assert.True(failures.Count == 0, $"{failures.Count} README example(s) do not answer as their comments say:\n\n" + string.Join("\n\n", failures));
    }

    [Fact]
    public void TheReadmeParserSeesCommandsCommentsAndContinuations()
    {
        var block = new ReadmeBlock("sh", 10, """
            # prose before
            curl -s http://x/a   # 201; 409 if it exists
            curl -s -X POST http://x/b -d '{"A":1,
              "B":"# not a comment"}'
            # {"Results":[1,
            #   2]}

            curl -s http://x/c \
                 -H 'X: 1'
            # HTTP/1.1 200 OK
            # X: 1
            """);
        var commands = ReadmeDocument.Commands(block);
        Assert.Equal(3, commands.Count);
        Assert.Equal(("curl -s http://x/a", 11), (commands[0].Text, commands[0].Line));
        Assert.Equal(("201; 409 if it exists", 0), (commands[0].Inline, commands[0].Below.Count));
        Assert.Equal("curl -s -X POST http://x/b -d '{\"A\":1,\n  \"B\":\"# not a comment\"}'", commands[1].Text);
        Assert.Equal(["{\"Results\":[1,", "  2]}"], commands[1].Below);
        Assert.Equal("curl -s http://x/c -H 'X: 1'", Regex.Replace(commands[2].Text, " +", " "));
        Assert.Equal(["HTTP/1.1 200 OK", "X: 1"], commands[2].Below);
    }

    [Theory]
    [InlineData("{\"Id\":\"<id>\",\"N\":...}", "{\"Id\":\"users/1\",\"N\":3}", true)]
    [InlineData("{\"Id\":\"<id>\",\"N\":...}", "{\"Id\":\"users/1\",\"M\":3}", false)]
    [InlineData("{\"A\":\"<x>\",\"B\":\"<x>\"}", "{\"A\":\"1\",\"B\":\"1\"}", true)]
    [InlineData("{\"A\":\"<x>\",\"B\":\"<x>\"}", "{\"A\":\"1\",\"B\":\"2\"}", false)]
    [InlineData("{\"Count\":27}", "{\"Count\":0}", false)]
    [InlineData("{\"Count\":27}", "{\"Count\":27}\n", true)]
    public void AnAnswerMatchesItsPatternOnlyWhenEveryLiteralIsThere(string pattern, string actual, bool matches)
    {
        Assert.Equal(matches, ReadmePattern.Matches(pattern, actual, []));
    }

    [Fact]
    public void ANameKeepsTheValueTheFirstAnswerShowedAndFillsLaterCommands()
    {
        var values = new Dictionary<string, string>();
        Assert.True(ReadmePattern.Matches("{\"ChangeVector\":\"<change vector>\"}", "{\"ChangeVector\":\"A:1-abc\"}", values));
        Assert.False(ReadmePattern.Matches("{\"ChangeVector\":\"<change vector>\"}", "{\"ChangeVector\":\"A:2-abc\"}", values));
        Assert.Equal("curl -H 'If-Match: \"A:1-abc\"'", ReadmePattern.Fill("curl -H 'If-Match: \"<change vector>\"'", values));
        Assert.Throws<InvalidOperationException>(() => ReadmePattern.Fill("curl <unknown>", values));
    }

    /// <summary>The README's commands that talk to the unsecured server: every command of each block (outside the Security section) whose commands all call curl.</summary>
    private static List<ReadmeCommand> CurlCommands() =>
        ReadmeDocument.Blocks()
            .Where(block => block.Language == "sh" && block.Section != ReadmeSecurityTests.Section)
            .Select(ReadmeDocument.Commands)
            .Where(commands => commands.Count > 0 && commands.All(c => CurlCall().IsMatch(c.Text)))
            .SelectMany(commands => commands)
            .ToList();

    /// <summary>Runs <paramref name="command"/> with bash in <paramref name="workingDirectory"/> (the repository's folder); each curl transfer's output is followed by a status line.</summary>
    internal static async Task<string> RunAsync(string command, string? workingDirectory = null)
    {
        var result = await Bash.RunAsync($"curl() {{ command curl -w '\\n{StatusMarker}%{{http_code}}\\n' \"$@\"; }}\n{command}",
            workingDirectory ?? ReadmeDocument.RepositoryRoot, TimeSpan.FromSeconds(60));
        return result.TimedOut ? $"(still running after 60 s) {result.Output}" : result.Output + result.Error;
    }

    /// <summary>
    /// What the README shows a command answers: a status at the end of its line (<c># 204</c>,
    /// perhaps followed by prose) and the answer below it; with no status, the lines below it (then
    /// the comment at the end of the line is prose), else that comment.
    /// </summary>
    private static List<string> ExpectationOf(ReadmeCommand command)
    {
        if (command.Inline is { } inline && StatusComment().IsMatch(inline))
        {
            return [inline, .. Unwrap(command.Below)];
        }
        if (command.Below.Count > 0)
        {
            return Unwrap(command.Below);
        }
        return command.Inline is null ? [] : [command.Inline];
    }

    /// <summary>Null when <paramref name="output"/> is what the command's comment shows, else what differs.</summary>
    internal static string? Check(ReadmeCommand command, string output, Dictionary<string, string> values)
    {
        var lines = ExpectationOf(command);
        if (lines.Count == 0)
        {
            return "the command has no answer beside it (a status such as '# 204', or the body it answers)";
        }

        // The last transfer's output: from the end of the marker before it (or the start) to its marker.
        output = output.Replace("\r\n", "\n", StringComparison.Ordinal);
        var markers = Marker().Matches(output);
        if (markers.Count == 0)
        {
            return "curl did not run";
        }
        var last = markers[^1];
        var status = last.Groups[1].Value;
        var from = markers.Count > 1 ? markers[^2].Index + markers[^2].Length : 0;
        var transfer = output[from..last.Index];

        var (statusLine, headers, body) = SplitResponse(transfer);
        var first = lines[0];
        var rest = lines.Skip(1).ToList();
        if (StatusComment().Match(first) is { Success: true } code)
        {
            return code.Groups[1].Value != status ? $"answered {status}, the comment says {code.Groups[1].Value}" : MatchBody(rest, body, values);
        }
        if (first.StartsWith("HTTP/", StringComparison.Ordinal))
        {
            if (statusLine is null)
            {
                return "the comment shows a status line, the command does not print one (curl -i)";
            }
            if (!ReadmePattern.Matches(first, statusLine, values))
            {
                return $"the status line is '{statusLine}', the comment says '{first}'";
            }
            while (rest.Count > 0 && HeaderComment().IsMatch(rest[0]))
            {
                var header = rest[0];
                if (!headers.Any(h => ReadmePattern.Matches(header, h, values)))
                {
                    return $"no header '{header}' among: {string.Join(" | ", headers)}";
                }
                rest.RemoveAt(0);
            }
            return MatchBody(rest, body, values);
        }
        return MatchBody(lines, body, values);
    }

    private static string? MatchBody(List<string> pattern, string body, Dictionary<string, string> values)
    {
        if (pattern.Count == 0)
        {
            return null;
        }
        var expected = string.Join("\n", pattern);
        return ReadmePattern.Matches(expected, body, values) ? null : $"the answer is not what the comment shows: {expected}";
    }

    /// <summary>Comment lines that start with a space continue the line above (a long answer wrapped).</summary>
    private static List<string> Unwrap(IReadOnlyList<string> expectation)
    {
        var lines = new List<string>();
        foreach (var line in expectation)
        {
            if (lines.Count > 0 && line.Length > 0 && char.IsWhiteSpace(line[0]))
            {
                lines[^1] += line.TrimStart();
            }
            else
            {
                lines.Add(line.TrimEnd());
            }
        }
        return lines;
    }

    private static (string? StatusLine, List<string> Headers, string Body) SplitResponse(string transfer)
    {
        if (!transfer.StartsWith("HTTP/", StringComparison.Ordinal))
        {
            return (null, [], transfer);
        }
        var end = transfer.IndexOf("\n\n", StringComparison.Ordinal);
        var head = (end < 0 ? transfer : transfer[..end]).Split('\n');
        return (head[0].Trim(), head.Skip(1).Select(h => h.Trim()).ToList(), end < 0 ? "" : transfer[(end + 2)..]);
    }

    [GeneratedRegex(@"\n?@@readme-status (\d{3})\n")]
    private static partial Regex Marker();

    [GeneratedRegex(@"(^|\|\s*)curl\s")]
    private static partial Regex CurlCall();

    [GeneratedRegex(@"^(\d{3})(\D.*)?$")]
    private static partial Regex StatusComment();

    [GeneratedRegex(@"^[A-Za-z][A-Za-z0-9-]*: ")]
    private static partial Regex HeaderComment();
}
