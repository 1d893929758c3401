using Lucene.Net.Analysis;
using Lucene.Net.Analysis.Util;

namespace Jackdaw.Server.Indexing.Analysis;

/// <summary>
/// An analyzer assembled from Lucene factories: the char filters over the text, then the tokenizer,
/// then each token filter in order (what Lucene 5's <c>CustomAnalyzer</c> does; Lucene.Net 4.8 has
/// none). The factories are shared by every thread's token stream: Lucene's factories keep no state
/// once informed.
/// </summary>
public sealed class PipelineAnalyzer(IReadOnlyList<CharFilterFactory> charFilters, TokenizerFactory tokenizer, IReadOnlyList<TokenFilterFactory> tokenFilters) : Analyzer
{
    protected override TokenStreamComponents CreateComponents(string fieldName, TextReader reader)
    {
        var source = tokenizer.Create(reader);
        TokenStream stream = source;
        foreach (var filter in tokenFilters)
        {
            stream = filter.Create(stream);
        }
        return new TokenStreamComponents(source, stream);
    }

    protected override TextReader InitReader(string fieldName, TextReader reader)
    {
        foreach (var filter in charFilters)
        {
            reader = filter.Create(reader);
        }
        return reader;
    }
}
