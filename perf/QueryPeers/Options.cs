internal sealed class Options
{
    private readonly Dictionary<string, string> _values = new(StringComparer.Ordinal);

    public static Options Parse(string[] args)
    {
        var options = new Options();
        for (var i = 0; i + 1 < args.Length; i += 2)
        {
            if (!args[i].StartsWith("--", StringComparison.Ordinal))
            {
                throw new ArgumentException($"Expected an option such as --postgres, got '{args[i]}'.");
            }
            options._values[args[i][2..]] = args[i + 1];
        }
        return options;
    }

    public string Require(string name) => _values.TryGetValue(name, out var value) ? value : throw new ArgumentException($"--{name} is required.");

    public string Get(string name, string fallback) => _values.GetValueOrDefault(name, fallback);
}
