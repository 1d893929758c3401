using System.Linq.Expressions;

namespace Jackdaw.Client.Queries.Linq;

/// <summary>
/// Finds the document fields an expression reads: each outermost member access (or dictionary
/// indexer) that <see cref="FieldPathResolver"/> resolves to a path, e.g. <c>ShipTo.City</c> for
/// <c>x.ShipTo.City == "Paris"</c>, <c>Lines</c> for <c>x.Lines.Any(...)</c>, <c>id()</c> for the id.
/// </summary>
internal sealed class DocumentFieldCollector(FieldPathResolver fields, Action<FieldPath> found) : ExpressionVisitor
{
    protected override Expression VisitMember(MemberExpression node) =>
        Found(node) ? node : base.VisitMember(node);

    protected override Expression VisitMethodCall(MethodCallExpression node) =>
        Found(node) ? node : base.VisitMethodCall(node);

    private bool Found(Expression node)
    {
        FieldPath path;
        try
        {
            if (!fields.TryResolve(node, out path) || path.IsRoot)
            {
                return false;
            }
        }
        catch (NotSupportedException)
        {
            // x.Freight.HasValue and the like: not a field itself; its parts are looked at.
            return false;
        }

        found(path);
        return true;
    }
}
