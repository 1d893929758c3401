using System.Text;
using System.Text.RegularExpressions;

namespace Jackdaw.Server.Tests.Readme;

/// <summary>
/// What the README shows as an answer, read as a pattern: text stands for itself, <c>...</c> for
/// anything (or nothing), and <c>&lt;a name&gt;</c> for one value without spaces, quotes or commas
/// that is the same everywhere in the README: the first answer that shows it binds it, later answers
/// must show the same value, and later commands use it (a change vector to send back, say).
/// </summary>
internal static partial class ReadmePattern
{
    /// <summary>Whether <paramref name="actual"/> (trimmed) is all of <paramref name="pattern"/>; binds the names it shows first into <paramref name="values"/>.</summary>
    public static bool Matches(string pattern, string actual, Dictionary<string, string> values)
    {
        var regex = new StringBuilder("^");
        var groups = new Dictionary<string, string>();
        var position = 0;
        foreach (Match token in Token().Matches(pattern))
        {
            regex.Append(Regex.Escape(pattern[position..token.Index]));
            position = token.Index + token.Length;
            if (token.Value == "...")
            {
                regex.Append("(?s:.*?)");
                continue;
            }
            var name = token.Groups[1].Value;
            if (values.TryGetValue(name, out var bound))
            {
                regex.Append(Regex.Escape(bound));
            }
            else if (groups.TryGetValue(name, out var group))
            {
                regex.Append(@"\k<").Append(group).Append('>');
            }
            else
            {
                group = "v" + groups.Count;
                groups.Add(name, group);
                regex.Append("(?<").Append(group).Append(@">[^\s"",]+?)");
            }
        }
        regex.Append(Regex.Escape(pattern[position..])).Append('$');
        var match = Regex.Match(actual.Trim(), regex.ToString(), RegexOptions.None, TimeSpan.FromSeconds(5));
        if (!match.Success)
        {
            return false;
        }
        foreach (var (name, group) in groups)
        {
            values[name] = match.Groups[group].Value;
        }
        return true;
    }

    /// <summary>A command with the values of the names it uses filled in; a name no answer has shown yet is an error.</summary>
    public static string Fill(string command, IReadOnlyDictionary<string, string> values) =>
        Name().Replace(command, match => values.TryGetValue(match.Groups[1].Value, out var value)
            ? value
            : throw new InvalidOperationException($"The command uses <{match.Groups[1].Value}>, which no answer above it shows."));

    [GeneratedRegex(@"\.\.\.|<([a-z][a-z0-9 -]*)>")]
    private static partial Regex Token();

    [GeneratedRegex(@"<([a-z][a-z0-9 -]*)>")]
    private static partial Regex Name();
}
