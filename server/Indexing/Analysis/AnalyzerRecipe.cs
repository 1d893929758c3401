using System.Text;
using System.Text.Json;
using Jackdaw.Server.Errors;
using Lucene.Net.Analysis;
using Lucene.Net.Analysis.Util;
using static Jackdaw.Server.Indexing.Analysis.AnalysisPart;

namespace Jackdaw.Server.Indexing.Analysis;

/// <summary>
/// What an analyzer's <c>Code</c> says to build, checked: either a built-in analyzer
/// (<see cref="BuiltInAnalyzers"/>) named by the code, or a description of Lucene parts from
/// <see cref="AnalysisCatalog"/> (README.md in this folder has the format):
/// <code>
/// {"CharFilters": ["HTMLStrip"],
///  "Tokenizer": "Standard",
///  "TokenFilters": ["LowerCase", "ASCIIFolding", {"Type": "EdgeNGram", "minGramSize": 2, "maxGramSize": 10}]}
/// </code>
/// Jackdaw never compiles code: RavenDB's C# analyzer classes are refused with a message that says so.
/// </summary>
public sealed class AnalyzerRecipe
{
    /// <summary>The longest <c>Code</c> taken.</summary>
    public const int MaxCodeLength = 16 * 1024;

    /// <summary>The most char filters and token filters one description may chain.</summary>
    public const int MaxCharFilters = 4, MaxTokenFilters = 16;

    private const string Example = "{\"Tokenizer\":\"Whitespace\",\"TokenFilters\":[\"LowerCase\",\"ASCIIFolding\",{\"Type\":\"EdgeNGram\",\"minGramSize\":2,\"maxGramSize\":10}]}";

    // A text every part meets once when a recipe is checked: the failures Lucene's factories leave
    // to the first token stream (an n-gram's minimum above its maximum) surface before anything is stored.
    private const string ProbeText = "Jackdaw's <b>probe</b>: Ünïcode, e-mail a@b.example, 12.5 and /a/b/c paths.";

    private readonly BuiltInAnalyzers.BuiltIn? _builtIn;
    private readonly IReadOnlyList<Step> _steps;

    private AnalyzerRecipe(BuiltInAnalyzers.BuiltIn? builtIn, IReadOnlyList<Step> steps, string canonical)
    {
        _builtIn = builtIn;
        _steps = steps;
        Canonical = canonical;
    }

    /// <summary>
    /// The recipe in one stable form (parts by factory name, arguments sorted, values as the
    /// factories read them): equal for codes that build the same analyzer, whatever their spacing,
    /// casing or spelling of names. Index fingerprints hold it.
    /// </summary>
    public string Canonical { get; }

    /// <summary>One part and the arguments its factory is given.</summary>
    private sealed record Step(AnalysisPart Part, SortedDictionary<string, string> Arguments);

    /// <summary>Reads and checks <paramref name="code"/>, and builds it once over a probe text.</summary>
    /// <exception cref="AnalyzerCompilationException">The code is not a built-in analyzer's name nor a description of allowed parts.</exception>
    public static AnalyzerRecipe Parse(string? analyzerName, string? code)
    {
        if (string.IsNullOrWhiteSpace(code))
        {
            throw new AnalyzerCompilationException(analyzerName, "its Code is empty. Give a built-in analyzer's name (" + BuiltInAnalyzers.Names + ") or a JSON description such as " + Example + ".");
        }
        if (code.Length > MaxCodeLength)
        {
            throw new AnalyzerCompilationException(analyzerName, $"its Code is {code.Length} characters long; the most is {MaxCodeLength}.");
        }
        var trimmed = code.Trim();
        AnalyzerRecipe recipe;
        if (trimmed.StartsWith('{'))
        {
            recipe = FromDescription(analyzerName, trimmed);
        }
        else if (BuiltInAnalyzers.Find(trimmed) is { } builtIn)
        {
            recipe = new AnalyzerRecipe(builtIn, [], builtIn.Name);
        }
        else
        {
            var csharp = trimmed.Contains("class ", StringComparison.Ordinal) || trimmed.Contains("using ", StringComparison.Ordinal);
            throw new AnalyzerCompilationException(analyzerName, (csharp
                    ? "its Code looks like C# source; Jackdaw does not compile analyzer classes. "
                    : $"its Code '{Shorten(trimmed)}' is not the name of a built-in analyzer. ")
                + "Give a built-in analyzer's name (" + BuiltInAnalyzers.Names + ") or a JSON description of Lucene parts such as " + Example + ".");
        }
        recipe.Check(analyzerName);
        return recipe;
    }

    /// <summary>A new Lucene analyzer of this recipe (thread-safe, as Lucene's analyzers are).</summary>
    public Analyzer Build()
    {
        if (_builtIn is not null)
        {
            return _builtIn.Create();
        }
        CharFilterFactory[] charFilters = [.. _steps.Where(s => s.Part.Kind == PartKind.CharFilter).Select(s => (CharFilterFactory)Create(s))];
        var tokenizer = (TokenizerFactory)Create(_steps.Single(s => s.Part.Kind == PartKind.Tokenizer));
        TokenFilterFactory[] filters = [.. _steps.Where(s => s.Part.Kind == PartKind.TokenFilter).Select(s => (TokenFilterFactory)Create(s))];
        return new PipelineAnalyzer(charFilters, tokenizer, filters);
    }

    private static AbstractAnalysisFactory Create(Step step)
    {
        // The factories take their arguments out of the dictionary they are given.
        var arguments = new Dictionary<string, string>(step.Arguments, StringComparer.Ordinal)
        {
            ["luceneMatchVersion"] = "LUCENE_48",
        };
        var spiName = step.Part.Name.ToLowerInvariant();
        AbstractAnalysisFactory factory = step.Part.Kind switch
        {
            PartKind.CharFilter => CharFilterFactory.ForName(spiName, arguments),
            PartKind.Tokenizer => TokenizerFactory.ForName(spiName, arguments),
            _ => TokenFilterFactory.ForName(spiName, arguments),
        };
        if (factory is IResourceLoaderAware aware)
        {
            aware.Inform(NoFiles.Instance);
        }
        return factory;
    }

    // Builds the analyzer and runs it over the probe text: what the factories refuse is refused now,
    // naming the first part whose addition fails.
    private void Check(string? analyzerName)
    {
        if (Probe(this) is null)
        {
            return;
        }
        for (var count = 1; count <= _steps.Count; count++)
        {
            var prefix = _steps.Take(count).ToList();
            if (prefix.Any(s => s.Part.Kind == PartKind.Tokenizer) && Probe(new AnalyzerRecipe(null, prefix, "")) is { } failure)
            {
                var step = prefix[^1];
                throw new AnalyzerCompilationException(analyzerName, $"Lucene refused the {Describe(step.Part.Kind)} '{step.Part.Name}': {failure.Message}", failure);
            }
        }
        throw new AnalyzerCompilationException(analyzerName, "Lucene refused its parts: " + Probe(this)!.Message);
    }

    // The failure building the recipe and analyzing the probe text with it, or null.
    private static Exception? Probe(AnalyzerRecipe recipe)
    {
        try
        {
            using var analyzer = recipe.Build();
            using var stream = analyzer.GetTokenStream("probe", new StringReader(ProbeText));
            stream.Reset();
            while (stream.IncrementToken())
            {
            }
            stream.End();
            return null;
        }
        catch (Exception e)
        {
            // Lucene.Net wraps a factory's own complaint in "SPI class ... cannot be instantiated" and a TargetInvocationException.
            while (e.InnerException is not null && (e is System.Reflection.TargetInvocationException || e.Message.StartsWith("SPI class", StringComparison.Ordinal)))
            {
                e = e.InnerException;
            }
            return e;
        }
    }

    private static AnalyzerRecipe FromDescription(string? analyzerName, string code)
    {
        JsonDocument document;
        try
        {
            document = JsonDocument.Parse(code);
        }
        catch (JsonException e)
        {
            throw new AnalyzerCompilationException(analyzerName, "its Code starts with '{' but is not valid JSON (" + e.Message + "). A description looks like " + Example + ".", e);
        }
        using (document)
        {
            var root = document.RootElement;
            if (root.ValueKind != JsonValueKind.Object)
            {
                throw new AnalyzerCompilationException(analyzerName, "its Code must be one JSON object, such as " + Example + ".");
            }
            JsonElement? tokenizer = null, tokenFilters = null, charFilters = null;
            foreach (var property in root.EnumerateObject())
            {
                if (string.Equals(property.Name, "Tokenizer", StringComparison.OrdinalIgnoreCase))
                {
                    tokenizer = property.Value;
                }
                else if (string.Equals(property.Name, "TokenFilters", StringComparison.OrdinalIgnoreCase))
                {
                    tokenFilters = property.Value;
                }
                else if (string.Equals(property.Name, "CharFilters", StringComparison.OrdinalIgnoreCase))
                {
                    charFilters = property.Value;
                }
                else
                {
                    throw new AnalyzerCompilationException(analyzerName, $"its description has '{property.Name}'; a description has \"Tokenizer\" (required), \"TokenFilters\" and \"CharFilters\" only.");
                }
            }
            if (tokenizer is not { ValueKind: JsonValueKind.String or JsonValueKind.Object } tokenizerJson)
            {
                throw new AnalyzerCompilationException(analyzerName, "its description needs a \"Tokenizer\", one of " + NamesOf(PartKind.Tokenizer) + " (a name, or {\"Type\":name, arguments...}).");
            }
            var steps = new List<Step>();
            steps.AddRange(List(analyzerName, charFilters, PartKind.CharFilter, "CharFilters", MaxCharFilters));
            steps.Add(ReadStep(analyzerName, tokenizerJson, PartKind.Tokenizer));
            steps.AddRange(List(analyzerName, tokenFilters, PartKind.TokenFilter, "TokenFilters", MaxTokenFilters));
            return new AnalyzerRecipe(null, steps, CanonicalOf(steps));
        }
    }

    private static List<Step> List(string? analyzerName, JsonElement? json, PartKind kind, string property, int max)
    {
        if (json is null || json.Value.ValueKind == JsonValueKind.Null)
        {
            return [];
        }
        if (json.Value.ValueKind != JsonValueKind.Array)
        {
            throw new AnalyzerCompilationException(analyzerName, $"\"{property}\" must be an array of {Describe(kind)}s: names, or {{\"Type\":name, arguments...}} objects.");
        }
        if (json.Value.GetArrayLength() > max)
        {
            throw new AnalyzerCompilationException(analyzerName, $"\"{property}\" has {json.Value.GetArrayLength()} entries; the most is {max}.");
        }
        return [.. json.Value.EnumerateArray().Select(entry => ReadStep(analyzerName, entry, kind))];
    }

    private static Step ReadStep(string? analyzerName, JsonElement entry, PartKind kind)
    {
        string? name = entry.ValueKind switch
        {
            JsonValueKind.String => entry.GetString(),
            JsonValueKind.Object when entry.TryGetProperty("Type", out var type) && type.ValueKind == JsonValueKind.String => type.GetString(),
            _ => null,
        };
        if (string.IsNullOrWhiteSpace(name))
        {
            throw new AnalyzerCompilationException(analyzerName, $"a {Describe(kind)} must be a name or an object with \"Type\" (its name) and its arguments, such as {{\"Type\":\"EdgeNGram\",\"minGramSize\":2,\"maxGramSize\":10}}; got {Shorten(entry.GetRawText())}.");
        }
        var part = AnalysisCatalog.Find(kind, name)
            ?? throw new AnalyzerCompilationException(analyzerName, $"the {Describe(kind)} '{name}' is not one Jackdaw allows. Allowed {Describe(kind)}s: {NamesOf(kind)}.");
        var arguments = new SortedDictionary<string, string>(StringComparer.Ordinal);
        if (entry.ValueKind == JsonValueKind.Object)
        {
            foreach (var property in entry.EnumerateObject())
            {
                if (property.NameEquals("Type"))
                {
                    continue;
                }
                var rule = part.Arguments.FirstOrDefault(a => string.Equals(a.Name, property.Name, StringComparison.OrdinalIgnoreCase))
                    ?? throw new AnalyzerCompilationException(analyzerName, part.Arguments.Count == 0
                        ? $"the {Describe(kind)} '{part.Name}' takes no arguments; got '{property.Name}'."
                        : $"the {Describe(kind)} '{part.Name}' has no argument '{property.Name}'; its arguments are {string.Join(", ", part.Arguments.Select(a => a.Name))}.");
                arguments[rule.Name] = rule.Check(property.Value, out var problem)
                    ?? throw new AnalyzerCompilationException(analyzerName, $"the {Describe(kind)} '{part.Name}' has {rule.Name} {Shorten(property.Value.GetRawText())}; it must be {problem}.");
            }
        }
        foreach (var required in part.Arguments.Where(a => a.Required && !arguments.ContainsKey(a.Name)))
        {
            throw new AnalyzerCompilationException(analyzerName, $"the {Describe(kind)} '{part.Name}' needs the argument {required.Name}.");
        }
        return new Step(part, arguments);
    }

    private static string CanonicalOf(List<Step> steps)
    {
        using var buffer = new MemoryStream();
        using (var writer = new Utf8JsonWriter(buffer))
        {
            writer.WriteStartObject();
            foreach (var (kind, property) in new[] { (PartKind.CharFilter, "CharFilters"), (PartKind.Tokenizer, "Tokenizer"), (PartKind.TokenFilter, "TokenFilters") })
            {
                writer.WriteStartArray(property);
                foreach (var step in steps.Where(s => s.Part.Kind == kind))
                {
                    writer.WriteStartObject();
                    writer.WriteString("Type", step.Part.Name);
                    foreach (var (name, value) in step.Arguments)
                    {
                        writer.WriteString(name, value);
                    }
                    writer.WriteEndObject();
                }
                writer.WriteEndArray();
            }
            writer.WriteEndObject();
        }
        return Encoding.UTF8.GetString(buffer.ToArray());
    }

    private static string NamesOf(PartKind kind) => string.Join(", ", AnalysisCatalog.Of(kind).Select(p => p.Name));

    private static string Shorten(string text) => text.Length <= 80 ? text : text[..77] + "...";

    /// <summary>
    /// The resource loader the factories get: it opens no file and loads no class (a description
    /// cannot reach the server's disk), except Lucene's own Snowball stemmers, which the Snowball
    /// factory looks up by language.
    /// </summary>
    private sealed class NoFiles : IResourceLoader
    {
        public static readonly NoFiles Instance = new();

        public Stream OpenResource(string resource) =>
            throw new InvalidOperationException($"a part asked to read '{resource}'; Jackdaw's analyzers read no files.");

        public Type FindType(string cname)
        {
            var type = typeof(TokenFilterFactory).Assembly.GetType(cname);
            return type is not null && type.Namespace == "Lucene.Net.Tartarus.Snowball.Ext"
                ? type
                : throw new InvalidOperationException($"a part asked to load the class '{cname}'; Jackdaw's analyzers load none.");
        }

        public T NewInstance<T>(string cname) => (T)Activator.CreateInstance(FindType(cname))!;
    }
}
