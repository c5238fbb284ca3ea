/**
 * A WPGraphQL-shaped schema: the type, field, argument and enum names a WPGraphQL client uses for
 * posts, pages, categories, tags and users (authors), so the proxy is exercised with real shapes.
 */

function connection(name: string, node: string): string {
  return `
type ${name} { nodes: [${node}!]! edges: [${name}Edge!]! pageInfo: PageInfo! }
type ${name}Edge { cursor: String! node: ${node}! }`;
}

const PAGING = 'first: Int, after: String, last: Int, before: String';

export const typeDefs = /* GraphQL */ `
interface Node { id: ID! }
interface DatabaseIdentifier { databaseId: Int! }

type PageInfo { hasNextPage: Boolean! hasPreviousPage: Boolean! startCursor: String endCursor: String }

enum PostStatusEnum { PUBLISH DRAFT PENDING PRIVATE }
enum PostIdType { ID DATABASE_ID SLUG URI }
enum PageIdType { ID DATABASE_ID URI }
enum CategoryIdType { ID DATABASE_ID SLUG NAME URI }
enum TagIdType { ID DATABASE_ID SLUG NAME URI }
enum UserNodeIdTypeEnum { ID DATABASE_ID SLUG URI }

type User implements Node & DatabaseIdentifier {
  id: ID! databaseId: Int! userId: Int! name: String slug: String description: String uri: String
  posts(${PAGING}): UserToPostConnection!
}
type NodeWithAuthorToUserConnectionEdge { node: User! }

type Post implements Node & DatabaseIdentifier {
  id: ID! databaseId: Int! postId: Int! title: String content: String excerpt: String slug: String uri: String
  date: String dateGmt: String modified: String modifiedGmt: String status: String
  author: NodeWithAuthorToUserConnectionEdge
  categories(${PAGING}): PostToCategoryConnection!
  tags(${PAGING}): PostToTagConnection!
}

type Page implements Node & DatabaseIdentifier {
  id: ID! databaseId: Int! pageId: Int! title: String content: String slug: String uri: String
  date: String dateGmt: String modified: String status: String
  author: NodeWithAuthorToUserConnectionEdge
}

type Category implements Node & DatabaseIdentifier {
  id: ID! databaseId: Int! categoryId: Int! name: String slug: String description: String uri: String count: Int
  posts(${PAGING}): CategoryToPostConnection!
}

type Tag implements Node & DatabaseIdentifier {
  id: ID! databaseId: Int! tagId: Int! name: String slug: String description: String uri: String count: Int
  posts(${PAGING}): TagToPostConnection!
}

${connection('RootQueryToPostConnection', 'Post')}
${connection('RootQueryToPageConnection', 'Page')}
${connection('RootQueryToCategoryConnection', 'Category')}
${connection('RootQueryToTagConnection', 'Tag')}
${connection('RootQueryToUserConnection', 'User')}
${connection('PostToCategoryConnection', 'Category')}
${connection('PostToTagConnection', 'Tag')}
${connection('CategoryToPostConnection', 'Post')}
${connection('TagToPostConnection', 'Post')}
${connection('UserToPostConnection', 'Post')}

input RootQueryToPostConnectionWhereArgs {
  search: String categoryName: String categoryId: Int tagSlugIn: [String] authorName: String status: PostStatusEnum
}
input RootQueryToTermConnectionWhereArgs { search: String hideEmpty: Boolean }

type RootQuery {
  posts(${PAGING}, where: RootQueryToPostConnectionWhereArgs): RootQueryToPostConnection!
  post(id: ID!, idType: PostIdType = ID): Post
  pages(${PAGING}): RootQueryToPageConnection!
  page(id: ID!, idType: PageIdType = ID): Page
  categories(${PAGING}, where: RootQueryToTermConnectionWhereArgs): RootQueryToCategoryConnection!
  category(id: ID!, idType: CategoryIdType = ID): Category
  tags(${PAGING}, where: RootQueryToTermConnectionWhereArgs): RootQueryToTagConnection!
  tag(id: ID!, idType: TagIdType = ID): Tag
  users(${PAGING}): RootQueryToUserConnection!
  user(id: ID!, idType: UserNodeIdTypeEnum = ID): User
  node(id: ID!): Node
  viewer: User
}

input PostTermNodeInput { id: ID slug: String name: String }
input PostCategoriesInput { append: Boolean nodes: [PostTermNodeInput] }
input PostTagsInput { append: Boolean nodes: [PostTermNodeInput] }

input CreatePostInput {
  clientMutationId: String title: String content: String excerpt: String slug: String status: PostStatusEnum
  date: String authorId: ID categories: PostCategoriesInput tags: PostTagsInput
}
input UpdatePostInput {
  clientMutationId: String id: ID! title: String content: String excerpt: String slug: String status: PostStatusEnum
  date: String authorId: ID categories: PostCategoriesInput tags: PostTagsInput
}
input DeletePostInput { clientMutationId: String id: ID! forceDelete: Boolean }
type CreatePostPayload { clientMutationId: String post: Post }
type UpdatePostPayload { clientMutationId: String post: Post }
type DeletePostPayload { clientMutationId: String deletedId: ID post: Post }

input CreatePageInput { clientMutationId: String title: String content: String slug: String status: PostStatusEnum date: String authorId: ID }
input UpdatePageInput { clientMutationId: String id: ID! title: String content: String slug: String status: PostStatusEnum date: String authorId: ID }
input DeletePageInput { clientMutationId: String id: ID! forceDelete: Boolean }
type CreatePagePayload { clientMutationId: String page: Page }
type UpdatePagePayload { clientMutationId: String page: Page }
type DeletePagePayload { clientMutationId: String deletedId: ID page: Page }

input CreateCategoryInput { clientMutationId: String name: String! slug: String description: String }
input UpdateCategoryInput { clientMutationId: String id: ID! name: String slug: String description: String }
input DeleteCategoryInput { clientMutationId: String id: ID! }
type CreateCategoryPayload { clientMutationId: String category: Category }
type UpdateCategoryPayload { clientMutationId: String category: Category }
type DeleteCategoryPayload { clientMutationId: String deletedId: ID category: Category }

input CreateTagInput { clientMutationId: String name: String! slug: String description: String }
input UpdateTagInput { clientMutationId: String id: ID! name: String slug: String description: String }
input DeleteTagInput { clientMutationId: String id: ID! }
type CreateTagPayload { clientMutationId: String tag: Tag }
type UpdateTagPayload { clientMutationId: String tag: Tag }
type DeleteTagPayload { clientMutationId: String deletedId: ID tag: Tag }

type RootMutation {
  createPost(input: CreatePostInput!): CreatePostPayload
  updatePost(input: UpdatePostInput!): UpdatePostPayload
  deletePost(input: DeletePostInput!): DeletePostPayload
  createPage(input: CreatePageInput!): CreatePagePayload
  updatePage(input: UpdatePageInput!): UpdatePagePayload
  deletePage(input: DeletePageInput!): DeletePagePayload
  createCategory(input: CreateCategoryInput!): CreateCategoryPayload
  updateCategory(input: UpdateCategoryInput!): UpdateCategoryPayload
  deleteCategory(input: DeleteCategoryInput!): DeleteCategoryPayload
  createTag(input: CreateTagInput!): CreateTagPayload
  updateTag(input: UpdateTagInput!): UpdateTagPayload
  deleteTag(input: DeleteTagInput!): DeleteTagPayload
}

schema { query: RootQuery mutation: RootMutation }
`;
