using System.Linq.Expressions;
using System.Reflection;

namespace Jackdaw.Client.Queries.Linq;

/// <summary>Which parts of a LINQ expression are values computed on the client, and their values.</summary>
internal static class ExpressionValues
{
    /// <summary>True when <paramref name="expression"/> refers to no lambda parameter it does not declare itself: a constant or captured value.</summary>
    public static bool IsEvaluable(Expression expression)
    {
        var finder = new FreeParameterFinder();
        finder.Visit(expression);
        return !finder.Found;
    }

    /// <summary>The value of an evaluable expression: constants and captured variables are read directly, anything else is compiled and run.</summary>
    public static object? Evaluate(Expression expression)
    {
        switch (expression)
        {
            case ConstantExpression constant:
                return constant.Value;
            case MemberExpression { Expression: null or ConstantExpression } member:
                var target = (member.Expression as ConstantExpression)?.Value;
                if (member.Member is FieldInfo field)
                {
                    return field.GetValue(target);
                }

                if (member.Member is PropertyInfo { GetMethod: not null } property)
                {
                    return property.GetValue(target);
                }

                break;
        }

        try
        {
            return Expression.Lambda<Func<object?>>(Expression.Convert(expression, typeof(object))).Compile(preferInterpretation: true)();
        }
        catch (Exception e) when (e is not NotSupportedException)
        {
            throw new InvalidOperationException($"The query's value '{expression}' could not be computed on the client: {e.Message}", e);
        }
    }

    /// <summary>Finds a parameter used but not declared inside the visited expression.</summary>
    private sealed class FreeParameterFinder : ExpressionVisitor
    {
        private readonly HashSet<ParameterExpression> _declared = [];

        public bool Found { get; private set; }

        public override Expression? Visit(Expression? node) => Found ? node : base.Visit(node);

        protected override Expression VisitLambda<T>(Expression<T> node)
        {
            _declared.UnionWith(node.Parameters);
            return base.VisitLambda(node);
        }

        protected override Expression VisitBlock(BlockExpression node)
        {
            _declared.UnionWith(node.Variables);
            return base.VisitBlock(node);
        }

        protected override Expression VisitParameter(ParameterExpression node)
        {
            if (!_declared.Contains(node))
            {
                Found = true;
            }

            return node;
        }
    }
}
