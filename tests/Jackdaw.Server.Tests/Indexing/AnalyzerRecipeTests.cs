using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Analysis;
using Lucene.Net.Analysis;
using Lucene.Net.Analysis.TokenAttributes;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>
/// An analyzer's Code: the built-in names RavenDB accepts, the JSON description of Lucene parts in
/// each of its spellings, the tokens the parts make, and every way a Code is refused, each with a
/// message that says what was wrong and what is allowed.
/// </summary>
public sealed class AnalyzerRecipeTests
{
    private static List<string> Tokens(Analyzer analyzer, string text)
    {
        var tokens = new List<string>();
        using var stream = analyzer.GetTokenStream("f", new StringReader(text));
        var term = stream.AddAttribute<ICharTermAttribute>();
        stream.Reset();
        while (stream.IncrementToken())
        {
            tokens.Add(term.ToString());
        }
        stream.End();
        return tokens;
    }

    private static List<string> Tokens(string code, string text)
    {
        using var analyzer = AnalyzerRecipe.Parse("Test", code).Build();
        return Tokens(analyzer, text);
    }

    [Theory]
    [InlineData("StandardAnalyzer", "The Quick-Brown fox", "quick brown fox")]
    [InlineData("Lucene.Net.Analysis.Standard.StandardAnalyzer", "The Quick-Brown fox", "quick brown fox")]
    [InlineData("WhitespaceAnalyzer", "The Quick-Brown fox", "The Quick-Brown fox")]
    [InlineData("Lucene.Net.Analysis.Core.WhitespaceAnalyzer", "The Quick-Brown fox", "The Quick-Brown fox")]
    [InlineData("Lucene.Net.Analysis.WhitespaceAnalyzer", "The Quick-Brown fox", "The Quick-Brown fox")]
    [InlineData("SimpleAnalyzer", "The Quick-Brown fox2", "the quick brown fox")]
    [InlineData("KeywordAnalyzer", "The Quick-Brown fox", "The Quick-Brown fox|")]
    [InlineData("StopAnalyzer", "The Quick-Brown fox", "quick brown fox")]
    [InlineData("  stopanalyzer ", "The fox", "fox")]
    public void ABuiltInAnalyzerIsNamedByClassOrFullName(string code, string text, string expected)
    {
        var tokens = Tokens(code, text);
        // "|" ends a single token that holds spaces.
        Assert.Equal(expected.EndsWith('|') ? [expected[..^1]] : expected.Split(' '), tokens);
    }

    [Fact]
    public void ABuiltInNameInTheWrongNamespaceIsNotOne()
    {
        var e = Assert.Throws<AnalyzerCompilationException>(() => AnalyzerRecipe.Parse("Test", "Lucene.Net.Analysis.Standard.WhitespaceAnalyzer"));
        Assert.Contains("not the name of a built-in analyzer", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ADescriptionChainsCharFiltersATokenizerAndTokenFilters()
    {
        const string code = """
            {"CharFilters": ["HTMLStrip"],
             "Tokenizer": "Whitespace",
             "TokenFilters": ["LowerCase", "ASCIIFolding"]}
            """;
        Assert.Equal(["<b>crème</b>", "brûlée", "&amp;", "café"], Tokens("""{"Tokenizer":"Whitespace","TokenFilters":["LowerCase"]}""", "<b>Crème</b> Brûlée &amp; Café"));
        Assert.Equal(["creme", "brulee", "&", "cafe"], Tokens(code, "<b>Crème</b> Brûlée &amp; Café"));
    }

    [Theory]
    [InlineData("""{"Tokenizer":"Standard","TokenFilters":["LowerCase",{"Type":"EdgeNGram","minGramSize":2,"maxGramSize":4}]}""", "Bestseller", "be bes best")]
    [InlineData("""{"Tokenizer":"Standard","TokenFilters":["LowerCase",{"Type":"NGram","minGramSize":3,"maxGramSize":3}]}""", "Best", "bes est")]
    [InlineData("""{"Tokenizer":{"Type":"NGram","minGramSize":"2","maxGramSize":"2"}}""", "abcd", "ab bc cd")]
    [InlineData("""{"Tokenizer":"Standard","TokenFilters":["LowerCase","Stop","PorterStem"]}""", "The running dogs", "run dog")]
    [InlineData("""{"Tokenizer":"Standard","TokenFilters":["LowerCase",{"Type":"SnowballPorter","language":"french"}]}""", "chevaux", "cheval")]
    [InlineData("""{"Tokenizer":"Whitespace","TokenFilters":[{"Type":"ASCIIFolding","preserveOriginal":true}]}""", "Café", "Cafe Café")]
    [InlineData("""{"Tokenizer":"Whitespace","TokenFilters":[{"Type":"Shingle","maxShingleSize":2,"outputUnigrams":false}]}""", "a b c", "a b|b c")]
    [InlineData("""{"Tokenizer":{"Type":"PathHierarchy","delimiter":"/"}}""", "/a/b", "/a /a/b")]
    [InlineData("""{"Tokenizer":"Keyword","TokenFilters":["LowerCase",{"Type":"Length","min":1,"max":3}]}""", "ABC", "abc")]
    [InlineData("""{"Tokenizer":"Whitespace","TokenFilters":[{"Type":"LimitTokenCount","maxTokenCount":2}]}""", "a b c d", "a b")]
    public void DescribedPartsMakeTheTokensLuceneMakes(string code, string text, string expected)
    {
        // "|" separates tokens that hold a space.
        Assert.Equal(expected.Contains('|') ? expected.Split('|') : expected.Split(' '), Tokens(code, text));
    }

    [Theory]
    [InlineData("""{"Tokenizer":"WhitespaceTokenizer","TokenFilters":["LowerCaseFilter","ASCIIFoldingFilter"]}""")]
    [InlineData("""{"Tokenizer":"WhitespaceTokenizerFactory","TokenFilters":["LowerCaseFilterFactory","ASCIIFoldingFilterFactory"]}""")]
    [InlineData("""{"tokenizer":"Lucene.Net.Analysis.Core.WhitespaceTokenizer","tokenfilters":["Lucene.Net.Analysis.Core.LowerCaseFilter",{"Type":"asciifolding"}]}""")]
    [InlineData("""{"Tokenizer":{"Type":"whitespace"},"TokenFilters":["lowercase","AsciiFolding"],"CharFilters":[]}""")]
    public void PartsAreNamedAsLuceneNamesThemInAnyCase(string code)
    {
        var canonical = AnalyzerRecipe.Parse("Test", """{"Tokenizer":"Whitespace","TokenFilters":["LowerCase","ASCIIFolding"]}""").Canonical;
        Assert.Equal(canonical, AnalyzerRecipe.Parse("Test", code).Canonical);
        Assert.Equal(["cafe"], Tokens(code, "Café"));
    }

    [Fact]
    public void TheCanonicalFormIgnoresSpacingAndArgumentOrderButNotArguments()
    {
        var a = AnalyzerRecipe.Parse("T", """{"Tokenizer":"Standard","TokenFilters":[{"Type":"NGram","minGramSize":2,"maxGramSize":3}]}""");
        var b = AnalyzerRecipe.Parse("T", """ {  "TokenFilters" : [ { "maxGramSize" : "3", "Type" : "ngram", "minGramSize" : 2 } ], "Tokenizer" : "standard" } """);
        var c = AnalyzerRecipe.Parse("T", """{"Tokenizer":"Standard","TokenFilters":[{"Type":"NGram","minGramSize":2,"maxGramSize":4}]}""");
        Assert.Equal(a.Canonical, b.Canonical);
        Assert.NotEqual(a.Canonical, c.Canonical);
        Assert.Equal("WhitespaceAnalyzer", AnalyzerRecipe.Parse("T", "lucene.net.analysis.core.whitespaceanalyzer").Canonical);
    }

    [Theory]
    [InlineData("", "Code is empty")]
    [InlineData("   ", "Code is empty")]
    [InlineData("MyOwnAnalyzer", "is not the name of a built-in analyzer")]
    [InlineData("using Lucene.Net.Analysis; public class MyAnalyzer : Analyzer { }", "does not compile analyzer classes")]
    [InlineData("{\"Tokenizer\":", "is not valid JSON")]
    [InlineData("{}", "needs a \"Tokenizer\"")]
    [InlineData("{\"Tokenizer\":null}", "needs a \"Tokenizer\"")]
    [InlineData("{\"Tokenizer\":[\"Standard\"]}", "needs a \"Tokenizer\"")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"Filters\":[]}", "has 'Filters'")]
    [InlineData("{\"Tokenizer\":\"Pattern\"}", "the tokenizer 'Pattern' is not one Jackdaw allows. Allowed tokenizers: Standard,")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[\"Synonym\"]}", "the token filter 'Synonym' is not one Jackdaw allows")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[\"HunspellStem\"]}", "the token filter 'HunspellStem' is not one Jackdaw allows")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[\"PatternReplace\"]}", "the token filter 'PatternReplace' is not one Jackdaw allows")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"CharFilters\":[\"Mapping\"]}", "the char filter 'Mapping' is not one Jackdaw allows. Allowed char filters: HTMLStrip")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":\"LowerCase\"}", "\"TokenFilters\" must be an array")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[42]}", "a token filter must be a name or an object with \"Type\"")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[{\"minGramSize\":2}]}", "a token filter must be a name or an object with \"Type\"")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[{\"Type\":\"Stop\",\"words\":\"/etc/passwd\"}]}", "the token filter 'Stop' has no argument 'words'; its arguments are ignoreCase")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[{\"Type\":\"Elision\",\"articles\":\"articles.txt\"}]}", "has no argument 'articles'")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[{\"Type\":\"LowerCase\",\"x\":1}]}", "the token filter 'LowerCase' takes no arguments; got 'x'")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[{\"Type\":\"NGram\",\"maxGramSize\":33}]}", "has maxGramSize 33; it must be a whole number from 1 to 32")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[{\"Type\":\"NGram\",\"maxGramSize\":2.5}]}", "it must be a whole number from 1 to 32")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[{\"Type\":\"NGram\",\"maxGramSize\":\"many\"}]}", "it must be a whole number from 1 to 32")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[{\"Type\":\"ASCIIFolding\",\"preserveOriginal\":\"yes\"}]}", "it must be true or false")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[{\"Type\":\"SnowballPorter\",\"language\":\"Klingon\"}]}", "it must be one of Armenian,")]
    [InlineData("{\"Tokenizer\":{\"Type\":\"PathHierarchy\",\"delimiter\":\"//\"}}", "it must be a string of one character")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[{\"Type\":\"Shingle\",\"maxShingleSize\":9}]}", "it must be a whole number from 2 to 8")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[\"Length\"]}", "the token filter 'Length' needs the argument min")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[{\"Type\":\"NGram\",\"minGramSize\":5,\"maxGramSize\":2}]}", "Lucene refused the token filter 'NGram': minGram must not be greater than maxGram")]
    [InlineData("{\"Tokenizer\":\"Standard\",\"TokenFilters\":[{\"Type\":\"Shingle\",\"minShingleSize\":4,\"maxShingleSize\":3}]}", "Lucene refused the token filter 'Shingle'")]
    public void ACodeThatIsNotAllowedIsRefusedWithWhatIsAllowed(string code, string mentions)
    {
        var e = Assert.Throws<AnalyzerCompilationException>(() => AnalyzerRecipe.Parse("Mine", code));
        Assert.StartsWith("Analyzer 'Mine' cannot be built: ", e.Message, StringComparison.Ordinal);
        Assert.Contains(mentions, e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void TooManyPartsOrTooLongACodeIsRefused()
    {
        var filters = string.Join(',', Enumerable.Repeat("\"LowerCase\"", AnalyzerRecipe.MaxTokenFilters + 1));
        var e = Assert.Throws<AnalyzerCompilationException>(() => AnalyzerRecipe.Parse("Mine", "{\"Tokenizer\":\"Standard\",\"TokenFilters\":[" + filters + "]}"));
        Assert.Contains($"the most is {AnalyzerRecipe.MaxTokenFilters}", e.Message, StringComparison.Ordinal);
        e = Assert.Throws<AnalyzerCompilationException>(() => AnalyzerRecipe.Parse("Mine", new string(' ', AnalyzerRecipe.MaxCodeLength + 1) + "StandardAnalyzer"));
        Assert.Contains($"the most is {AnalyzerRecipe.MaxCodeLength}", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(null, "needs a \"Name\"")]
    [InlineData(" ", "needs a \"Name\"")]
    [InlineData("a\u0001b", "control character")]
    [InlineData("StandardAnalyzer", "the built-in StandardAnalyzer's")]
    [InlineData("lucene.net.analysis.core.keywordanalyzer", "the built-in KeywordAnalyzer's")]
    public void AnAnalyzerNameThatCannotBeOneIsRefused(string? name, string mentions)
    {
        var e = Assert.Throws<AnalyzerCompilationException>(() => AnalyzerDefinition.ValidateName(name));
        Assert.Contains(mentions, e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void EveryCatalogPartIsALuceneFactory()
    {
        // The catalog's names are Lucene.Net's factory names: each builds alone with its defaults
        // (or with its required arguments), so no allowed part fails for want of a factory.
        foreach (var part in AnalysisCatalog.Tokenizers)
        {
            Assert.NotNull(AnalyzerRecipe.Parse(part.Name, $"{{\"Tokenizer\":\"{part.Name}\"}}"));
        }
        foreach (var part in AnalysisCatalog.TokenFilters)
        {
            var arguments = string.Concat(part.Arguments.Where(a => a.Required).Select(a => $",\"{a.Name}\":{a.Max}"));
            Assert.NotNull(AnalyzerRecipe.Parse(part.Name, $"{{\"Tokenizer\":\"Standard\",\"TokenFilters\":[{{\"Type\":\"{part.Name}\"{arguments}}}]}}"));
        }
        foreach (var part in AnalysisCatalog.CharFilters)
        {
            Assert.NotNull(AnalyzerRecipe.Parse(part.Name, $"{{\"Tokenizer\":\"Standard\",\"CharFilters\":[\"{part.Name}\"]}}"));
        }
        foreach (var language in AnalysisCatalog.SnowballLanguages)
        {
            Assert.NotNull(AnalyzerRecipe.Parse(language, $"{{\"Tokenizer\":\"Standard\",\"TokenFilters\":[{{\"Type\":\"SnowballPorter\",\"language\":\"{language}\"}}]}}"));
        }
    }
}
