using System.Text.RegularExpressions;
using Jackdaw.Server.Rql;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Util;

namespace Jackdaw.Server.Indexing.Lucene;

/// <summary>
/// <c>regex(Field, pattern)</c> on an index: every term of the field that the .NET regular
/// expression matches (<see cref="RqlRegex"/>), as a multi-term query. Walks the field's whole term
/// dictionary, as RavenDB's regex query does: a pattern has no prefix Lucene could seek to.
/// </summary>
internal sealed class RegexTermsQuery : MultiTermQuery
{
    private readonly Regex _regex;
    private readonly string _query;
    private readonly RqlValue _pattern;

    public RegexTermsQuery(string field, Regex regex, string query, RqlValue pattern)
        : base(field)
    {
        _regex = regex;
        _query = query;
        _pattern = pattern;
    }

    protected override TermsEnum GetTermsEnum(Terms terms, AttributeSource atts) =>
        new Matching(terms.GetEnumerator(), this);

    public override string ToString(string field) => (Field == field ? "" : Field + ":") + "/" + _regex + "/";

    public override bool Equals(object? obj) =>
        obj is RegexTermsQuery other && base.Equals(other) && other._regex.ToString() == _regex.ToString() && other._regex.Options == _regex.Options;

    public override int GetHashCode() => HashCode.Combine(base.GetHashCode(), _regex.ToString(), _regex.Options);

    private sealed class Matching(TermsEnum terms, RegexTermsQuery query) : FilteredTermsEnum(terms, startWithSeek: false)
    {
        protected override AcceptStatus Accept(BytesRef term) =>
            RqlRegex.IsMatch(query._query, query._pattern, query._regex, term.Utf8ToString()) ? AcceptStatus.YES : AcceptStatus.NO;
    }
}
