/** Stylesheets are bundled by Bun.build; importing one has no value. */
declare module '*.css';
