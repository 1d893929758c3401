using System.Text;

namespace Jackdaw.Server.Tests.Readme;

/// <summary>
/// A fenced code block of README.md: its info string (<c>sh</c>, <c>csharp</c>), the line its first
/// line of code is on, its text, and the <c>## </c> heading it is under.
/// </summary>
internal sealed record ReadmeBlock(string Language, int FirstLine, string Code, string Section = "");

/// <summary>
/// A shell command of a README block and what the README shows beside it: the comment at the end
/// of its last line (<paramref name="Inline"/>) and the comment lines right below it (<paramref name="Below"/>,
/// up to a blank line or the next command).
/// </summary>
internal sealed record ReadmeCommand(int Line, string Text, string? Inline, IReadOnlyList<string> Below);

/// <summary>README.md, read from the repository the tests were built from, cut into blocks and commands.</summary>
internal static class ReadmeDocument
{
    public static string RepositoryRoot { get; } = FindRoot();

    public static string Path => System.IO.Path.Combine(RepositoryRoot, "README.md");

    public static IReadOnlyList<ReadmeBlock> Blocks()
    {
        var blocks = new List<ReadmeBlock>();
        var lines = File.ReadAllLines(Path);
        var section = "";
        for (var i = 0; i < lines.Length; i++)
        {
            if (lines[i].StartsWith("## ", StringComparison.Ordinal))
            {
                section = lines[i][3..].Trim();
            }
            if (!lines[i].StartsWith("```", StringComparison.Ordinal) || lines[i].Length == 3)
            {
                continue;
            }
            var language = lines[i][3..].Trim();
            var code = new StringBuilder();
            var first = i + 2;
            for (i++; i < lines.Length && !lines[i].StartsWith("```", StringComparison.Ordinal); i++)
            {
                code.Append(lines[i]).Append('\n');
            }
            blocks.Add(new ReadmeBlock(language, first, code.ToString(), section));
        }
        return blocks;
    }

    /// <summary>
    /// The commands of a shell block. A command goes on while a quote is open or its line ends in
    /// <c>\</c>; a <c>#</c> outside quotes after a space starts its comment. Comment lines before a
    /// command are prose; those right after it are what it answers.
    /// </summary>
    public static IReadOnlyList<ReadmeCommand> Commands(ReadmeBlock block)
    {
        var commands = new List<ReadmeCommand>();
        var lines = block.Code.Split('\n');
        var text = new StringBuilder();
        List<string>? expectation = null;
        var start = 0;
        var quote = '\0';
        for (var i = 0; i < lines.Length; i++)
        {
            var line = lines[i];
            if (text.Length == 0)
            {
                var trimmed = line.TrimStart();
                if (trimmed.Length == 0)
                {
                    expectation = null;
                    continue;
                }
                if (trimmed[0] == '#')
                {
                    expectation?.Add(CommentText(trimmed));
                    continue;
                }
                start = block.FirstLine + i;
            }
            var (code, comment, endsInQuote) = Split(line, ref quote);
            text.Append(code);
            if (endsInQuote)
            {
                text.Append('\n');
                continue;
            }
            if (code.TrimEnd().EndsWith('\\'))
            {
                // A continued line: the backslash-newline is the shell's, the next line goes on the command.
                var trimmedEnd = text.ToString().TrimEnd();
                text.Clear().Append(trimmedEnd[..^1]).Append(' ');
                continue;
            }
            expectation = [];
            commands.Add(new ReadmeCommand(start, text.ToString().Trim(), comment, expectation));
            text.Clear();
        }
        return commands;
    }

    /// <summary>A comment line without its <c>#</c> and the one space after it (further indentation is kept: it marks a wrapped line).</summary>
    private static string CommentText(string trimmed) =>
        trimmed.Length > 1 && trimmed[1] == ' ' ? trimmed[2..] : trimmed[1..];

    private static (string Code, string? Comment, bool EndsInQuote) Split(string line, ref char quote)
    {
        for (var i = 0; i < line.Length; i++)
        {
            var c = line[i];
            if (quote != '\0')
            {
                if (c == quote)
                {
                    quote = '\0';
                }
                else if (c == '\\' && quote == '"')
                {
                    i++;
                }
                continue;
            }
            if (c is '\'' or '"')
            {
                quote = c;
            }
            else if (c == '\\')
            {
                i++;
            }
            else if (c == '#' && (i == 0 || char.IsWhiteSpace(line[i - 1])))
            {
                return (line[..i].TrimEnd(), CommentText(line[i..]), false);
            }
        }
        return (line, null, quote != '\0');
    }

    private static string FindRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(System.IO.Path.Combine(dir.FullName, "README.md")) && File.Exists(System.IO.Path.Combine(dir.FullName, "Server.sln")))
            {
                return dir.FullName;
            }
        }
        throw new InvalidOperationException($"No README.md beside Server.sln above {AppContext.BaseDirectory}.");
    }
}
