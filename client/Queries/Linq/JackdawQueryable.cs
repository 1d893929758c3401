using System.Collections;
using System.Linq.Expressions;

namespace Jackdaw.Client.Queries.Linq;

/// <summary>A query as an expression over its root; running it is <see cref="JackdawQueryProvider"/>'s.</summary>
internal sealed class JackdawQueryable<T> : IJackdawQueryable<T>
{
    private readonly JackdawQueryProvider _provider;

    public JackdawQueryable(JackdawQueryProvider provider)
    {
        _provider = provider;
        Expression = Expression.Constant(this);
    }

    public JackdawQueryable(JackdawQueryProvider provider, Expression expression)
    {
        _provider = provider;
        Expression = expression;
    }

    public Type ElementType => typeof(T);

    public Expression Expression { get; }

    public IQueryProvider Provider => _provider;

    public IEnumerator<T> GetEnumerator() => throw JackdawQueryProvider.SynchronousExecution();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    /// <summary>The RQL this query sends.</summary>
    public override string ToString() => _provider.Translate(Expression).ToRql();
}
