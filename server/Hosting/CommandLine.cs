using System.Text;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// The server's command line: <c>jackdaw [options]</c>, <c>jackdaw healthcheck [url]</c> or
/// <c>jackdaw --help</c>. Options are those of <see cref="CommandLineOption.All"/>, as
/// <c>--name value</c> or <c>--name=value</c>, names ignoring case. Anything else is refused with a
/// one-line <see cref="InvalidOperationException"/> (as a bad value is), so that a mistyped option
/// never starts a server on its default.
/// </summary>
internal sealed class CommandLine
{
    public const string HealthCheckVerb = "healthcheck";
    public const string DefaultHealthCheckUrl = "http://127.0.0.1:8080/build/version";

    private const string HelpHint = "(jackdaw --help lists the options)";

    /// <summary>Words a newcomer tries for an option of another name: <c>--port 9000</c> means <c>--urls</c>.</summary>
    private static readonly (string Word, string Option)[] Synonyms =
        [("port", "--urls"), ("host", "--urls"), ("listen", "--urls"), ("address", "--urls"), ("bind", "--urls")];

    private CommandLine(bool help, string? healthCheckUrl, IReadOnlyDictionary<string, string> settings)
    {
        Help = help;
        HealthCheckUrl = healthCheckUrl;
        Settings = settings;
    }

    /// <summary><c>--help</c> or <c>-h</c>: print <see cref="HelpText"/> and do nothing else.</summary>
    public bool Help { get; }

    /// <summary>Set for the <c>healthcheck</c> verb: the URL to check.</summary>
    public string? HealthCheckUrl { get; }

    /// <summary>The configuration the options set, by key (<c>Urls</c>, <c>Changes:CloseGrace</c>); a repeated option's last value.</summary>
    public IReadOnlyDictionary<string, string> Settings { get; }

    public static CommandLine Parse(IReadOnlyList<string> args)
    {
        // Help anywhere wins, even where a value was expected: "--urls --help" asks for help.
        if (args.Any(IsHelp))
        {
            return new CommandLine(help: true, null, new Dictionary<string, string>());
        }
        if (args.Count > 0 && args[0].Equals(HealthCheckVerb, StringComparison.OrdinalIgnoreCase))
        {
            return ParseHealthCheck(args);
        }

        var settings = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        for (var i = 0; i < args.Count; i++)
        {
            var arg = args[i];
            if (arg.Equals(HealthCheckVerb, StringComparison.OrdinalIgnoreCase))
            {
                throw new InvalidOperationException($"{HealthCheckVerb} comes first and takes no options: jackdaw {HealthCheckVerb} [URL]");
            }
            if (!arg.StartsWith('-'))
            {
                throw Refuse($"unexpected argument '{arg}'", arg);
            }
            var equals = arg.IndexOf('=', StringComparison.Ordinal);
            var name = equals < 0 ? arg : arg[..equals];
            var option = name.StartsWith("--", StringComparison.Ordinal) ? CommandLineOption.Find(name) : null;
            if (option is null)
            {
                throw Refuse($"unknown option '{name}'", name);
            }
            var value = equals >= 0 ? arg[(equals + 1)..]
                : i + 1 < args.Count && !args[i + 1].StartsWith("--", StringComparison.Ordinal) ? args[++i]
                : string.Empty;
            if (value.Length == 0)
            {
                throw new InvalidOperationException($"{name} needs a value, e.g. {name} {option.Example}");
            }
            settings[option.KeyFor(name)] = value;
        }
        return new CommandLine(help: false, null, settings);
    }

    /// <summary>What <c>--help</c> prints: every option with its default and environment variable.</summary>
    public static string HelpText(string version)
    {
        var text = new StringBuilder();
        text.Append($"""
            Jackdaw {version}, a document database server over HTTP.

            Usage:
              jackdaw [options]            run the server until SIGTERM or Ctrl+C
              jackdaw {HealthCheckVerb} [URL]    exit 0 if URL answers 200, else 1 (for container health checks;
                                           URL defaults to /build/version on the first of JACKDAW_URLS,
                                           0.0.0.0 read as 127.0.0.1, or {DefaultHealthCheckUrl};
                                           https on loopback takes the server's certificate unchecked)
              jackdaw --help, -h           print this and exit

            jackdaw is `dotnet run --project server -c Release --` from a checkout (the working directory is
            where you type it), `dotnet Jackdaw.Server.dll` when published.

            Options take a value as --name value or --name=value; names ignore case. Each can also be set by
            its environment variable or in appsettings.json beside the binary; the command line wins.


            """);
        foreach (var option in CommandLineOption.All)
        {
            text.Append($"  {option.Shown} {option.Value}\n");
            foreach (var line in option.Description.Split('\n'))
            {
                text.Append($"      {line}\n");
            }
            var defaults = $"      default: {option.Default}; environment: {option.Environment}";
            text.Append(defaults.Length <= 100 ? defaults : $"      default: {option.Default};\n      environment: {option.Environment}").Append('\n');
        }
        text.Append("""

            Exit codes: 0 after a clean shutdown (or --help), 1 when the server fails, 2 for an unknown
            option, a bad value or an address already in use.

            """);
        return text.ToString();
    }

    private static bool IsHelp(string arg) =>
        arg.Equals("--help", StringComparison.OrdinalIgnoreCase) || arg.Equals("-h", StringComparison.OrdinalIgnoreCase);

    private static CommandLine ParseHealthCheck(IReadOnlyList<string> args)
    {
        if (args.Count > 2)
        {
            throw new InvalidOperationException($"unexpected argument '{args[2]}': {HealthCheckVerb} takes one URL, e.g. {HealthCheckVerb} {DefaultHealthCheckUrl}");
        }
        var url = args.Count == 2 ? args[1]
            : HealthCheck.DefaultUrl(Environment.GetEnvironmentVariable("JACKDAW_URLS") ?? Environment.GetEnvironmentVariable("ASPNETCORE_URLS"));
        if (url.StartsWith('-'))
        {
            throw new InvalidOperationException($"{HealthCheckVerb} takes a URL, not '{url}', e.g. {HealthCheckVerb} {DefaultHealthCheckUrl}");
        }
        return new CommandLine(help: false, url, new Dictionary<string, string>());
    }

    private static InvalidOperationException Refuse(string what, string typed) =>
        new(Suggest(typed) is { } suggestion ? $"{what}; did you mean '{suggestion}'? {HelpHint}" : $"{what} {HelpHint}");

    /// <summary>
    /// The option (or verb) nearest to what was typed, if one is close: a few edits away (a third of
    /// the word), a prefix of it or the word a prefix of the option (<c>--max-body</c>), or a synonym.
    /// </summary>
    private static string? Suggest(string typed)
    {
        var word = typed.TrimStart('-').ToLowerInvariant();
        if (word.Length == 0)
        {
            return null;
        }
        var candidates = CommandLineOption.All.Select(option => (Word: option.Shown, Option: option.Shown))
            .Append(("--help", "--help"))
            .Append((HealthCheckVerb, HealthCheckVerb))
            .Concat(Synonyms);
        string? best = null;
        var bestDistance = int.MaxValue;
        foreach (var (candidateWord, option) in candidates)
        {
            var candidate = candidateWord.TrimStart('-').ToLowerInvariant();
            var distance = EditDistance(word, candidate);
            var close = distance <= Math.Max(1, word.Length / 3)
                || (word.Length >= 3 && (candidate.StartsWith(word, StringComparison.Ordinal) || word.StartsWith(candidate, StringComparison.Ordinal)));
            if (close && distance < bestDistance)
            {
                (best, bestDistance) = (option, distance);
            }
        }
        return best;
    }

    /// <summary>Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours count one.</summary>
    private static int EditDistance(string a, string b)
    {
        var d = new int[a.Length + 1, b.Length + 1];
        for (var i = 0; i <= a.Length; i++)
        {
            d[i, 0] = i;
        }
        for (var j = 0; j <= b.Length; j++)
        {
            d[0, j] = j;
        }
        for (var i = 1; i <= a.Length; i++)
        {
            for (var j = 1; j <= b.Length; j++)
            {
                var cost = a[i - 1] == b[j - 1] ? 0 : 1;
                d[i, j] = Math.Min(Math.Min(d[i - 1, j] + 1, d[i, j - 1] + 1), d[i - 1, j - 1] + cost);
                if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                {
                    d[i, j] = Math.Min(d[i, j], d[i - 2, j - 2] + 1);
                }
            }
        }
        return d[a.Length, b.Length];
    }
}
