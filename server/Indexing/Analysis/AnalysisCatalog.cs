using static Jackdaw.Server.Indexing.Analysis.AnalysisPart;

using Jackdaw.Server.Indexing.Lucene;

namespace Jackdaw.Server.Indexing.Analysis;

/// <summary>
/// The Lucene parts analyzer descriptions may use: a bounded list, not every factory Lucene.Net
/// ships. Left out on purpose: parts that read files or load classes (synonyms, stop word files,
/// hunspell dictionaries, keep/protected word lists), regular-expression parts (a pattern from a
/// request is a denial-of-service risk: .NET regexes run without a time limit in Lucene.Net), and
/// parts whose arguments cannot be bounded. Arguments are bounded too: n-grams at most 32 characters,
/// shingles at most 8 tokens, so one value cannot turn into an unbounded number of terms.
/// </summary>
public static class AnalysisCatalog
{
    /// <summary>The longest n-gram the n-gram parts may make.</summary>
    public const int MaxGramSize = 32;

    /// <summary>The most tokens a shingle may join.</summary>
    public const int MaxShingleSize = 8;

    private static readonly Argument[] None = [];

    private static readonly Argument[] Grams =
    [
        new("minGramSize", ArgumentKind.Integer, 1, MaxGramSize),
        new("maxGramSize", ArgumentKind.Integer, 1, MaxGramSize),
    ];

    private static readonly Argument[] TokenLength = [new("maxTokenLength", ArgumentKind.Integer, 1, LuceneFields.MaxTermChars)];

    /// <summary>The Snowball stemmers Lucene.Net's analysis package has (<c>Lucene.Net.Tartarus.Snowball.Ext</c>).</summary>
    public static readonly IReadOnlyList<string> SnowballLanguages =
    [
        "Armenian", "Basque", "Catalan", "Danish", "Dutch", "English", "Finnish", "French", "German", "German2", "Hungarian",
        "Irish", "Italian", "Kp", "Lovins", "Norwegian", "Porter", "Portuguese", "Romanian", "Russian", "Spanish", "Swedish", "Turkish",
    ];

    public static readonly IReadOnlyList<AnalysisPart> CharFilters =
    [
        new(PartKind.CharFilter, "HTMLStrip", [new("escapedTags", ArgumentKind.Text, Max: 1024)]),
    ];

    public static readonly IReadOnlyList<AnalysisPart> Tokenizers =
    [
        new(PartKind.Tokenizer, "Standard", TokenLength),
        new(PartKind.Tokenizer, "Classic", TokenLength),
        new(PartKind.Tokenizer, "UAX29URLEmail", TokenLength),
        new(PartKind.Tokenizer, "Whitespace", None),
        new(PartKind.Tokenizer, "Keyword", None),
        new(PartKind.Tokenizer, "Letter", None),
        new(PartKind.Tokenizer, "LowerCase", None),
        new(PartKind.Tokenizer, "NGram", Grams),
        new(PartKind.Tokenizer, "EdgeNGram", Grams),
        new(PartKind.Tokenizer, "PathHierarchy",
        [
            new("delimiter", ArgumentKind.Character),
            new("replace", ArgumentKind.Character),
            new("skip", ArgumentKind.Integer, 0, 64),
            new("reverse", ArgumentKind.Boolean),
        ]),
    ];

    public static readonly IReadOnlyList<AnalysisPart> TokenFilters =
    [
        new(PartKind.TokenFilter, "LowerCase", None),
        new(PartKind.TokenFilter, "UpperCase", None),
        new(PartKind.TokenFilter, "ASCIIFolding", [new("preserveOriginal", ArgumentKind.Boolean)]),
        // Lucene's English stop words (no word file).
        new(PartKind.TokenFilter, "Stop", [new("ignoreCase", ArgumentKind.Boolean)]),
        new(PartKind.TokenFilter, "PorterStem", None),
        new(PartKind.TokenFilter, "KStem", None),
        new(PartKind.TokenFilter, "EnglishMinimalStem", None),
        new(PartKind.TokenFilter, "EnglishPossessive", None),
        new(PartKind.TokenFilter, "SnowballPorter", [new("language", ArgumentKind.Choice, Choices: SnowballLanguages)]),
        new(PartKind.TokenFilter, "FrenchLightStem", None),
        new(PartKind.TokenFilter, "GermanLightStem", None),
        new(PartKind.TokenFilter, "SpanishLightStem", None),
        new(PartKind.TokenFilter, "ItalianLightStem", None),
        new(PartKind.TokenFilter, "PortugueseLightStem", None),
        new(PartKind.TokenFilter, "RussianLightStem", None),
        new(PartKind.TokenFilter, "GermanNormalization", None),
        new(PartKind.TokenFilter, "ScandinavianFolding", None),
        new(PartKind.TokenFilter, "ScandinavianNormalization", None),
        // Lucene's French articles (no article file).
        new(PartKind.TokenFilter, "Elision", [new("ignoreCase", ArgumentKind.Boolean)]),
        new(PartKind.TokenFilter, "Apostrophe", None),
        new(PartKind.TokenFilter, "NGram", Grams),
        new(PartKind.TokenFilter, "EdgeNGram", Grams),
        new(PartKind.TokenFilter, "Length",
        [
            new("min", ArgumentKind.Integer, 0, LuceneFields.MaxTermChars, Required: true),
            new("max", ArgumentKind.Integer, 0, LuceneFields.MaxTermChars, Required: true),
        ]),
        new(PartKind.TokenFilter, "Trim", None),
        new(PartKind.TokenFilter, "Truncate", [new("prefixLength", ArgumentKind.Integer, 1, LuceneFields.MaxTermChars)]),
        new(PartKind.TokenFilter, "ReverseString", None),
        new(PartKind.TokenFilter, "RemoveDuplicates", None),
        new(PartKind.TokenFilter, "LimitTokenCount",
        [
            new("maxTokenCount", ArgumentKind.Integer, 1, 10_000_000, Required: true),
            new("consumeAllTokens", ArgumentKind.Boolean),
        ]),
        new(PartKind.TokenFilter, "Shingle",
        [
            new("minShingleSize", ArgumentKind.Integer, 2, MaxShingleSize),
            new("maxShingleSize", ArgumentKind.Integer, 2, MaxShingleSize),
            new("outputUnigrams", ArgumentKind.Boolean),
            new("outputUnigramsIfNoShingles", ArgumentKind.Boolean),
            new("tokenSeparator", ArgumentKind.Text, Max: 16),
            new("fillerToken", ArgumentKind.Text, Max: 16),
        ]),
        new(PartKind.TokenFilter, "Classic", None),
        new(PartKind.TokenFilter, "Standard", None),
    ];

    /// <summary>The parts of one kind.</summary>
    public static IReadOnlyList<AnalysisPart> Of(PartKind kind) => kind switch
    {
        PartKind.CharFilter => CharFilters,
        PartKind.Tokenizer => Tokenizers,
        _ => TokenFilters,
    };

    /// <summary>
    /// The part a description names: its factory name (<c>NGram</c>), ignoring case, optionally as
    /// Lucene names the class or its factory (<c>NGramTokenFilter</c>, <c>NGramFilterFactory</c>,
    /// <c>Lucene.Net.Analysis.NGram.NGramTokenFilter</c>). Null when Jackdaw does not allow it.
    /// </summary>
    public static AnalysisPart? Find(PartKind kind, string name)
    {
        var bare = name.Trim();
        var dot = bare.LastIndexOf('.');
        if (dot >= 0)
        {
            bare = bare[(dot + 1)..];
        }
        string[] suffixes = kind switch
        {
            PartKind.CharFilter => ["CharFilterFactory", "CharFilter"],
            PartKind.Tokenizer => ["TokenizerFactory", "Tokenizer"],
            _ => ["TokenFilterFactory", "FilterFactory", "TokenFilter", "Filter"],
        };
        foreach (var suffix in suffixes)
        {
            if (bare.Length > suffix.Length && bare.EndsWith(suffix, StringComparison.OrdinalIgnoreCase))
            {
                bare = bare[..^suffix.Length];
                break;
            }
        }
        return Of(kind).FirstOrDefault(p => string.Equals(p.Name, bare, StringComparison.OrdinalIgnoreCase));
    }
}
